import type { OutboxMessage } from '@hub/outbox';
import type { SqlPool } from '@hub/database';
import type { NovoEvento } from './publicacao.repository';

/** A delivery as publication creates it (situacao pendente, no attempt yet). */
export interface NovaEntrega {
  id: string;
  eventoId: string;
  eventoRecebidoEm: Date;
  entidadeId: string;
  assinaturaId: string;
  aplicativoAssinanteId: string;
  tipoDeEventoId: string;
  versaoDoEsquema: number;
  urlDeDestino: string;
  maximoDeTentativas: number;
}

/** The Idempotency-Key a publication claims in its statement. */
export interface ChaveNova {
  escopo: string;
  chave: string;
  impressao: string;
}

/** How long an Idempotency-Key answers with its first event; an older one is replaced. */
export const VALIDADE_DA_CHAVE_MS = 24 * 3_600_000;

/** What one accepted publication writes (the event, its deliveries) and the delivery jobs sent once they are committed. */
export interface Gravacao {
  evento: NovoEvento;
  entregas: NovaEntrega[];
  trabalhos: OutboxMessage[];
  /** Its Idempotency-Key: the event is written only if the statement claims the key. */
  chave?: ChaveNova;
}

const isos = (datas: Date[]) => datas.map((d) => d.toISOString());

/**
 * ONE statement for any number of publications: their Idempotency-Keys, events and deliveries, as
 * data-modifying CTEs over `unnest` arrays, answering the ids of the events it wrote. A statement is
 * atomic on its own (autocommit, or inside the caller's transaction), so no BEGIN/COMMIT round trips;
 * the triggers fire once for it: on evento, the hour's tallies in resumo_por_hora (eventos and
 * eventos_guardados, one row; migration 005), on entrega, the copies of entrega_nao_concluida
 * (migration 018). The foreign keys of entrega are checked at the end of the statement. The delivery
 * jobs are not written: they are published once the statement has committed (despacho.ts).
 *
 * It is a named prepared statement (SqlPool: one text, planned once per connection), so every
 * value is an array parameter, whatever the batch's size.
 *
 * A keyed publication's event (with its deliveries) is written only when its key is
 * claimed: inserted, or taking the place of one older than 24 h (`on conflict … do update … where`
 * returns only those). A key held by another publication, committed or in flight, is not claimed:
 * the statement waits on the key's primary key until the other one commits, writes nothing of this
 * publication, and its caller answers with the first event.
 */
export const SQL_DA_GRAVACAO = `
    with chaves as (
      insert into chave_de_idempotencia as c (escopo, chave, impressao, evento_id, criada_em)
      select * from unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::timestamptz[])
      on conflict (escopo, chave) do update
         set impressao = excluded.impressao, evento_id = excluded.evento_id, criada_em = excluded.criada_em
       where c.criada_em < excluded.criada_em - $6::bigint * interval '1 millisecond'
      returning c.evento_id
    ), aceitos as (
      select a.id from unnest($7::uuid[], $8::boolean[]) as a(id, com_chave)
       where not a.com_chave or a.id in (select evento_id from chaves)
    ), eventos as (
      insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                          ocorrido_em, recebido_em, publicado_pelo_email, dados)
      select e.* from unnest($7::uuid[], $9::uuid[], $10::int[], $11::uuid[], $12::text[], $13::timestamptz[],
                             $14::timestamptz[], $15::text[], $16::json[])
                  as e(id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                       ocorrido_em, recebido_em, publicado_pelo_email, dados)
       where e.id in (select id from aceitos)
      returning id
    ), entregas as (
      insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id, aplicativo_assinante_id,
                           tipo_de_evento_id, versao_do_esquema, url_de_destino, maximo_de_tentativas,
                           situacao, proxima_tentativa_em, criada_em, atualizada_em)
      select n.*, 'pendente', n.recebido, n.recebido, n.recebido
        from unnest($17::uuid[], $18::uuid[], $19::timestamptz[], $20::text[], $21::uuid[], $22::uuid[],
                    $23::uuid[], $24::int[], $25::text[], $26::int[])
             as n(id, evento_id, recebido, entidade_id, assinatura_id, aplicativo_assinante_id, tipo_de_evento_id,
                  versao_do_esquema, url_de_destino, maximo_de_tentativas)
       where n.evento_id in (select id from aceitos)
    )
    select id::text from eventos`;

/** The parameters of SQL_DA_GRAVACAO for a batch of publications: one array per column. */
export function valoresDaGravacao(lote: Gravacao[]): unknown[] {
  const ev = lote.map((g) => g.evento);
  const en = lote.flatMap((g) => g.entregas);
  const comChave = lote.filter((g) => g.chave);
  const ch = comChave.map((g) => g.chave!);
  return [
    ch.map((k) => k.escopo),
    ch.map((k) => k.chave),
    ch.map((k) => k.impressao),
    comChave.map((g) => g.evento.id),
    isos(comChave.map((g) => g.evento.recebidoEm)),
    VALIDADE_DA_CHAVE_MS,
    ev.map((e) => e.id),
    lote.map((g) => g.chave !== undefined),
    ev.map((e) => e.tipoDeEventoId),
    ev.map((e) => e.versaoDoEsquema),
    ev.map((e) => e.aplicativoPublicadorId),
    ev.map((e) => e.entidadeId),
    isos(ev.map((e) => e.ocorridoEm)),
    isos(ev.map((e) => e.recebidoEm)),
    ev.map((e) => e.publicadoPeloEmail),
    ev.map((e) => e.dadosTexto),
    en.map((e) => e.id),
    en.map((e) => e.eventoId),
    isos(en.map((e) => e.eventoRecebidoEm)),
    en.map((e) => e.entidadeId),
    en.map((e) => e.assinaturaId),
    en.map((e) => e.aplicativoAssinanteId),
    en.map((e) => e.tipoDeEventoId),
    en.map((e) => e.versaoDoEsquema),
    en.map((e) => e.urlDeDestino),
    en.map((e) => e.maximoDeTentativas),
  ];
}

interface Pendente {
  gravacao: Gravacao;
  resolve: (escrita: boolean) => void;
  reject: (error: unknown) => void;
}

export interface GravadorOptions {
  /** Publications per statement at most. */
  maximo?: number;
  /** Statements in flight at once (connections of the pool the writer may hold). */
  paralelos?: number;
}

/**
 * Group commit (architecture §5), with or without an Idempotency-Key: publications that arrive while a statement is in flight wait and go
 * together in the next one, so at a high rate one round trip and one commit (one WAL flush) serve
 * many requests, and at a low one a publication waits for nothing but its own statement. If a
 * batch fails, its publications are written one by one, so one bad row fails alone. Once a statement
 * has committed, the jobs of the publications it wrote go to `despachar` (despacho.ts), before any of
 * them is answered.
 */
export function gravadorEmGrupo(
  sql: SqlPool,
  despachar: (trabalhos: OutboxMessage[]) => void,
  options: GravadorOptions = {},
) {
  const maximo = options.maximo ?? 200;
  const paralelos = options.paralelos ?? 2;
  const fila: Pendente[] = [];
  let ativos = 0;
  /** The ids of the events written (a keyed one whose key another publication holds is not). */
  const escrever = async (lote: Gravacao[]): Promise<Set<string>> => {
    const escritos = new Set(
      (await sql.consultar<{ id: string }>('publicacao_gravar', SQL_DA_GRAVACAO, valoresDaGravacao(lote))).map(
        (l) => l.id,
      ),
    );
    despachar(lote.filter((g) => escritos.has(g.evento.id)).flatMap((g) => g.trabalhos));
    return escritos;
  };

  async function escoar(): Promise<void> {
    ativos++;
    try {
      while (fila.length > 0) {
        const lote = fila.splice(0, maximo);
        try {
          const escritos = await escrever(lote.map((p) => p.gravacao));
          for (const p of lote) p.resolve(escritos.has(p.gravacao.evento.id));
        } catch (error) {
          // One key twice in a batch fails it too (an upsert cannot touch a row twice): one by one,
          // the second waits for the first and finds the key taken.
          if (lote.length === 1) lote[0]!.reject(error);
          else
            for (const p of lote)
              await escrever([p.gravacao]).then((escritos) => p.resolve(escritos.has(p.gravacao.evento.id)), p.reject);
        }
      }
    } finally {
      ativos--;
    }
  }

  return {
    /**
     * Resolves once the publication's rows are committed: true when they were written, false when
     * its Idempotency-Key belongs to another publication (nothing of it was written).
     */
    gravar(gravacao: Gravacao): Promise<boolean> {
      return new Promise<boolean>((resolve, reject) => {
        fila.push({ gravacao, resolve, reject });
        if (ativos < paralelos) void escoar();
      });
    },
  };
}
export type GravadorEmGrupo = ReturnType<typeof gravadorEmGrupo>;
