import { OUTBOX_COLUMNS, type OutboxMessage, outboxColumns } from '@hub/outbox';
import type { DbClient } from '../../db';
import { Prisma } from '@hub/hub-data';
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

/** What one accepted publication writes: the event, its deliveries and their delivery jobs. */
export interface Gravacao {
  evento: NovoEvento;
  entregas: NovaEntrega[];
  trabalhos: OutboxMessage[];
  /** Its Idempotency-Key: the event is written only if the statement claims the key. */
  chave?: ChaveNova;
}

const isos = (datas: Date[]) => datas.map((d) => d.toISOString());

/**
 * ONE statement for any number of publications: their Idempotency-Keys, events, deliveries and
 * outbox rows (@hub/outbox's columns), as data-modifying CTEs over `unnest` arrays, answering the
 * ids of the events it wrote. A statement is atomic on its own (autocommit, or inside the caller's
 * transaction), so no BEGIN/COMMIT round trips; the triggers fire once for it: on evento, the
 * hour's tallies in resumo_por_hora (eventos and eventos_guardados, one row; migration 005), on
 * outbox, the relays' NOTIFY. The foreign keys of entrega are checked at the end of the statement.
 *
 * A keyed publication's event (with its deliveries and jobs) is written only when its key is
 * claimed: inserted, or taking the place of one older than 24 h (`on conflict … do update … where`
 * returns only those). A key held by another publication, committed or in flight, is not claimed:
 * the statement waits on the key's primary key until the other one commits, writes nothing of this
 * publication, and its caller answers with the first event.
 */
export function sqlDaGravacao(lote: Gravacao[]): Prisma.Sql {
  const ev = lote.map((g) => g.evento);
  const en = lote.flatMap((g) => g.entregas);
  const trabalhos = lote.flatMap((g) => g.trabalhos);
  const comChave = lote.filter((g) => g.chave);
  const ch = comChave.map((g) => g.chave!);
  const [oId, oExchange, oRota, oMensagem, oCorpo, oCabecalhos] = outboxColumns(trabalhos);
  return Prisma.sql`
    with chaves as (
      insert into chave_de_idempotencia as c (escopo, chave, impressao, evento_id, criada_em)
      select * from unnest(${ch.map((k) => k.escopo)}::text[], ${ch.map((k) => k.chave)}::text[],
                           ${ch.map((k) => k.impressao)}::text[], ${comChave.map((g) => g.evento.id)}::uuid[],
                           ${isos(comChave.map((g) => g.evento.recebidoEm))}::timestamptz[])
      on conflict (escopo, chave) do update
         set impressao = excluded.impressao, evento_id = excluded.evento_id, criada_em = excluded.criada_em
       where c.criada_em < excluded.criada_em - ${VALIDADE_DA_CHAVE_MS} * interval '1 millisecond'
      returning c.evento_id
    ), aceitos as (
      select a.id from unnest(${ev.map((e) => e.id)}::uuid[], ${lote.map((g) => g.chave !== undefined)}::boolean[])
                        as a(id, com_chave)
       where not a.com_chave or a.id in (select evento_id from chaves)
    ), eventos as (
      insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                          ocorrido_em, recebido_em, publicado_pelo_email, dados)
      select e.* from unnest(${ev.map((e) => e.id)}::uuid[], ${ev.map((e) => e.tipoDeEventoId)}::uuid[],
                           ${ev.map((e) => e.versaoDoEsquema)}::int[], ${ev.map((e) => e.aplicativoPublicadorId)}::uuid[],
                           ${ev.map((e) => e.entidadeId)}::text[], ${isos(ev.map((e) => e.ocorridoEm))}::timestamptz[],
                           ${isos(ev.map((e) => e.recebidoEm))}::timestamptz[],
                           ${ev.map((e) => e.publicadoPeloEmail)}::text[], ${ev.map((e) => e.dadosTexto)}::json[])
                  as e(id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                       ocorrido_em, recebido_em, publicado_pelo_email, dados)
       where e.id in (select id from aceitos)
      returning id
    ), entregas as (
      insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id, aplicativo_assinante_id,
                           tipo_de_evento_id, versao_do_esquema, url_de_destino, maximo_de_tentativas,
                           situacao, proxima_tentativa_em, criada_em, atualizada_em)
      select n.*, 'pendente', n.recebido, n.recebido, n.recebido
        from unnest(${en.map((e) => e.id)}::uuid[], ${en.map((e) => e.eventoId)}::uuid[],
                    ${isos(en.map((e) => e.eventoRecebidoEm))}::timestamptz[], ${en.map((e) => e.entidadeId)}::text[],
                    ${en.map((e) => e.assinaturaId)}::uuid[], ${en.map((e) => e.aplicativoAssinanteId)}::uuid[],
                    ${en.map((e) => e.tipoDeEventoId)}::uuid[], ${en.map((e) => e.versaoDoEsquema)}::int[],
                    ${en.map((e) => e.urlDeDestino)}::text[], ${en.map((e) => e.maximoDeTentativas)}::int[])
             as n(id, evento_id, recebido, entidade_id, assinatura_id, aplicativo_assinante_id, tipo_de_evento_id,
                  versao_do_esquema, url_de_destino, maximo_de_tentativas)
       where n.evento_id in (select id from aceitos)
    ), trabalhos as (
      insert into outbox (${Prisma.raw(OUTBOX_COLUMNS.join(', '))})
      select o.* from unnest(${oId}::uuid[], ${oExchange}::text[], ${oRota}::text[], ${oMensagem}::text[],
                             ${oCorpo}::json[], ${oCabecalhos}::jsonb[])
                  as o(${Prisma.raw(OUTBOX_COLUMNS.join(', '))})
       where o.message_id in (select id::text from unnest(${en.map((e) => e.id)}::uuid[], ${en.map((e) => e.eventoId)}::uuid[]) as m(id, evento_id)
                              where m.evento_id in (select id from aceitos))
    )
    select id::text from eventos`;
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
 * Group commit (DESIGN §5), with or without an Idempotency-Key: publications that arrive while a statement is in flight wait and go
 * together in the next one, so at a high rate one round trip and one commit (one WAL flush) serve
 * many requests, and at a low one a publication waits for nothing but its own statement. If a
 * batch fails, its publications are written one by one, so one bad row fails alone.
 */
export function gravadorEmGrupo(db: DbClient, options: GravadorOptions = {}) {
  const maximo = options.maximo ?? 200;
  const paralelos = options.paralelos ?? 2;
  const fila: Pendente[] = [];
  let ativos = 0;
  /** The ids of the events written (a keyed one whose key another publication holds is not). */
  const escrever = async (lote: Gravacao[]): Promise<Set<string>> =>
    new Set((await db.$queryRaw<{ id: string }[]>(sqlDaGravacao(lote))).map((l) => l.id));

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
