import { executeOnPrisma, type SqlPool } from '@hub/database';
import { fatiaDoResumo, horaDoResumo, type Prisma } from '@hub/hub-data';
import type { DbClient } from '../../db';
import { compilarFiltroGuardado } from '../assinaturas/filtro';
import type { Gravacao } from './gravacao';
import { BUSCAR_CHAVE, type ChaveGuardada, consultaDaGravacao, PUBLICACAO_CONTAR_RECUSA } from './publicacao.sql';

export type { ChaveGuardada } from './publicacao.sql';

/** What SQL_DA_GRAVACAO wrote: the events, and the place of each ordered delivery (by delivery id). */
export interface Escritos {
  eventos: Set<string>;
  ordenadas: Map<string, { sequencia: number; emEspera: boolean }>;
}

/**
 * Publication reaches the database through Prisma (the typed client; declared statements run on it
 * where its API cannot say it, publicacao.sql.ts), with ONE exception: the group write
 * (`gravar`), the key's lookup (`buscarChave`) and the outbox insert of the jobs the broker did not
 * confirm (despacho.ts) go through `SqlPool` as named prepared statements. Those run for every
 * accepted event (with a key, for the lookup); Prisma sends its raw queries unnamed, parsed and
 * planned on every call, and planning those CTEs cost as much as running them (docs/benchmarks.md,
 * "Publication: where the time goes"); and SqlPool's statements fail once unanswered for
 * ESPERA_MAXIMA_MS (10 s), where Prisma's wait up to ESPERA_PRISMA_MS (30 s). Everything else runs
 * rarely (refusals, a key's replay, cache misses) and keeps Prisma's types.
 *
 * Every Prisma function takes the client or a transaction (`cliente`, the base client when absent).
 */
export function publicacaoRepository(db: DbClient, sql: SqlPool) {
  return {
    /**
     * Writes a batch of publications in one statement (SQL_DA_GRAVACAO): the ids of the events it
     * wrote, and each ordered delivery's sequencia and whether it waits for an earlier one.
     */
    async gravar(lote: Gravacao[]): Promise<Escritos> {
      const { statement: gravacao, valores } = consultaDaGravacao(lote);
      const linhas = await sql.run(gravacao, valores);
      const escritos: Escritos = { eventos: new Set(), ordenadas: new Map() };
      for (const l of linhas)
        if (l.sequencia === null) escritos.eventos.add(l.id);
        else escritos.ordenadas.set(l.id, { sequencia: Number(l.sequencia), emEspera: l.em_espera === true });
      return escritos;
    },

    /**
     * The subscriptions that may receive a new event of this type and version, each with its
     * content filter compiled (null: every event). Compiled here, once per read: the registry's
     * cache (registro-em-cache.ts) keeps what this answers, so publication never parses a filter,
     * and a write of a subscription (whose NOTIFY drops that cache) is read and compiled again.
     */
    async assinaturasAtivas(tipoDeEventoId: string, versaoDoEsquema: number, cliente: DbClient = db) {
      const linhas = await cliente.assinatura.findMany({
        where: { tipoDeEventoId, versaoDoEsquema, ativa: true, excluidaEm: null },
        select: {
          id: true,
          aplicativoAssinanteId: true,
          urlDeDestino: true,
          maximoDeTentativas: true,
          filtro: true,
          entregaOrdenada: true,
          aplicativoAssinante: { select: { nome: true } },
        },
        orderBy: { id: 'asc' },
      });
      return linhas.map(({ filtro, ...a }) => ({ ...a, filtro: compilarFiltroGuardado(filtro) }));
    },

    /** +1 refused in the summary's tally of the hour; a random slice, so concurrent writers rarely meet. */
    async contarRecusa(instante: Date, cliente: DbClient = db): Promise<void> {
      await executeOnPrisma(cliente, PUBLICACAO_CONTAR_RECUSA, [horaDoResumo(instante), fatiaDoResumo()]);
    },

    /**
     * The key's record, read first by every publication that carries one: through `SqlPool`, as
     * the group write, so that a database that hangs fails it within the same time (ESPERA_MAXIMA_MS)
     * instead of holding the publication for ever (Prisma's queries have no such limit).
     */
    buscarChave: async (escopo: string, chave: string): Promise<ChaveGuardada | null> => {
      const [guardada] = await sql.run(BUSCAR_CHAVE, [escopo, chave]);
      return guardada ?? null;
    },

    inserirRecusado: (data: Prisma.EventoRecusadoUncheckedCreateInput, cliente: DbClient = db) =>
      cliente.eventoRecusado.create({ data, select: { id: true } }),
  };
}
export type PublicacaoRepository = ReturnType<typeof publicacaoRepository>;
