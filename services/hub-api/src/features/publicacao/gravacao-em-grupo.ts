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

/** What one accepted publication writes: the event, its deliveries and their delivery jobs. */
export interface Gravacao {
  evento: NovoEvento;
  entregas: NovaEntrega[];
  trabalhos: OutboxMessage[];
}

const isos = (datas: Date[]) => datas.map((d) => d.toISOString());

/**
 * ONE statement for any number of publications: their events, deliveries and outbox rows (@hub/outbox's
 * columns), as data-modifying CTEs over `unnest` arrays. A statement is atomic on its own
 * (autocommit, or inside the caller's transaction), so no BEGIN/COMMIT round trips; the triggers
 * fire once for it: on evento, the hour's tallies in resumo_por_hora (eventos and eventos_guardados,
 * one row; migration 005), on outbox, the relays' NOTIFY.
 * The foreign keys of entrega are checked at the end of the statement, after the events are in.
 */
export function sqlDaGravacao(lote: Gravacao[]): Prisma.Sql {
  const ev = lote.map((g) => g.evento);
  const en = lote.flatMap((g) => g.entregas);
  const trabalhos = lote.flatMap((g) => g.trabalhos);
  const [oId, oExchange, oRota, oMensagem, oCorpo, oCabecalhos] = outboxColumns(trabalhos);
  return Prisma.sql`
    with eventos as (
      insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                          ocorrido_em, recebido_em, publicado_pelo_email, dados)
      select * from unnest(${ev.map((e) => e.id)}::uuid[], ${ev.map((e) => e.tipoDeEventoId)}::uuid[],
                           ${ev.map((e) => e.versaoDoEsquema)}::int[], ${ev.map((e) => e.aplicativoPublicadorId)}::uuid[],
                           ${ev.map((e) => e.entidadeId)}::text[], ${isos(ev.map((e) => e.ocorridoEm))}::timestamptz[],
                           ${isos(ev.map((e) => e.recebidoEm))}::timestamptz[],
                           ${ev.map((e) => e.publicadoPeloEmail)}::text[], ${ev.map((e) => e.dadosTexto)}::json[])
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
    )
    insert into outbox (${Prisma.raw(OUTBOX_COLUMNS.join(', '))})
    select * from unnest(${oId}::uuid[], ${oExchange}::text[], ${oRota}::text[], ${oMensagem}::text[],
                         ${oCorpo}::json[], ${oCabecalhos}::jsonb[])`;
}

interface Pendente {
  gravacao: Gravacao;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface GravadorOptions {
  /** Publications per statement at most. */
  maximo?: number;
  /** Statements in flight at once (connections of the pool the writer may hold). */
  paralelos?: number;
}

/**
 * Group commit (DESIGN §5): publications that arrive while a statement is in flight wait and go
 * together in the next one, so at a high rate one round trip and one commit (one WAL flush) serve
 * many requests, and at a low one a publication waits for nothing but its own statement. If a
 * batch fails, its publications are written one by one, so one bad row fails alone.
 */
export function gravadorEmGrupo(db: DbClient, options: GravadorOptions = {}) {
  const maximo = options.maximo ?? 200;
  const paralelos = options.paralelos ?? 2;
  const fila: Pendente[] = [];
  let ativos = 0;
  const escrever = async (lote: Gravacao[]) => {
    await db.$executeRaw(sqlDaGravacao(lote));
  };

  async function escoar(): Promise<void> {
    ativos++;
    try {
      while (fila.length > 0) {
        const lote = fila.splice(0, maximo);
        try {
          await escrever(lote.map((p) => p.gravacao));
          for (const p of lote) p.resolve();
        } catch (error) {
          if (lote.length === 1) lote[0]!.reject(error);
          else for (const p of lote) await escrever([p.gravacao]).then(p.resolve, p.reject);
        }
      }
    } finally {
      ativos--;
    }
  }

  return {
    /** Resolves once the publication's rows are committed. */
    gravar(gravacao: Gravacao): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        fila.push({ gravacao, resolve, reject });
        if (ativos < paralelos) void escoar();
      });
    },
  };
}
export type GravadorEmGrupo = ReturnType<typeof gravadorEmGrupo>;
