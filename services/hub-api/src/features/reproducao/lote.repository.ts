import { executeOnPrisma, runOnPrisma } from '@hub/database';
import type { Reproducao } from '@hub/hub-data';
import type { DbClient, Tx } from '../../db';
import { compilarFiltroGuardado, type Predicado } from '../assinaturas/filtro';
import type { EventoDoLote } from './classificacao';
import {
  REPRODUCAO_ABERTAS,
  REPRODUCAO_AINDA_NA_FILA,
  REPRODUCAO_ASSINATURA,
  REPRODUCAO_CRIAR_ENTREGAS,
  REPRODUCAO_PROXIMOS,
  REPRODUCAO_REIVINDICAR,
  REPRODUCAO_TRAVAR_ASSINATURA,
  REPRODUCAO_TRAVAR_FINAIS,
} from './lote.sql';

/** The subscription as a batch reads it, under the replay's lock of it. */
export interface AssinaturaParaLote {
  id: string;
  aplicativoAssinanteId: string;
  tipoDeEventoId: string;
  tipoNome: string;
  versaoDoEsquema: number;
  urlDeDestino: string;
  maximoDeTentativas: number;
  entregaOrdenada: boolean;
  recebe: boolean;
  filtro: Predicado | null;
}

const INICIO = { recebidoEm: new Date('0001-01-01T00:00:00.000Z'), id: '00000000-0000-0000-0000-000000000000' };

/**
 * The statements of a replay's batch (docs/decisions/replay-engine.md), each inside the batch's
 * transaction. New deliveries are written as publication writes them (publicacao.repository.ts,
 * ENTREGAS): pendente, due now, the subscription's url and attempts; an ordered subscription's get the
 * next sequencia of their entity's chain (the counter row advanced once per entity, in key order as
 * publication and liberar_seguintes lock them), and each one whose number is not the chain's turn
 * waits (em_espera, no job) for liberar_seguintes to release it.
 */
export function loteRepository(db: DbClient) {
  return {
    /** Replays not yet final, oldest first. */
    async abertas(limite: number): Promise<string[]> {
      const linhas = await runOnPrisma(db, REPRODUCAO_ABERTAS, [limite]);
      return linhas.map((l) => l.id);
    },

    /** The replay, locked until the batch commits, if still open and no other runner holds it. */
    async reivindicar(id: string, tx: Tx): Promise<Reproducao | undefined> {
      const [linha] = await runOnPrisma(tx, REPRODUCAO_REIVINDICAR, [id]);
      return linha ? await tx.reproducao.findUniqueOrThrow({ where: { id } }) : undefined;
    },

    /** How many of these deliveries are still in the queue (a job in flight, a retry due, or waiting their turn). */
    async aindaNaFila(ids: readonly string[], tx: Tx): Promise<number> {
      if (ids.length === 0) return 0;
      const [linha] = await runOnPrisma(tx, REPRODUCAO_AINDA_NA_FILA, [ids]);
      return linha?.n ?? 0;
    },

    /**
     * The subscription, with a transaction lock of its own: two replays of one subscription (on two
     * hub-api) never write its batches at once, so neither creates a delivery the other just did.
     */
    async travarAssinatura(id: string, tx: Tx): Promise<AssinaturaParaLote | undefined> {
      await executeOnPrisma(tx, REPRODUCAO_TRAVAR_ASSINATURA, [`reproducao:${id}`]);
      const [a] = await runOnPrisma(tx, REPRODUCAO_ASSINATURA, [id]);
      return a ? { ...a, filtro: compilarFiltroGuardado(a.filtro) } : undefined;
    },

    /** The next events of the range after the cursor, by (recebido_em, id), each with its latest delivery to the subscription. */
    async proximos(r: Reproducao, a: AssinaturaParaLote, lote: number, tx: Tx): Promise<EventoDoLote[]> {
      const cursor = { recebidoEm: r.cursorRecebidoEm ?? INICIO.recebidoEm, id: r.cursorEventoId ?? INICIO.id };
      const linhas = await runOnPrisma(tx, REPRODUCAO_PROXIMOS, [
        a.filtro !== null,
        a.id,
        a.tipoDeEventoId,
        a.versaoDoEsquema,
        r.desde,
        r.ate,
        cursor.recebidoEm,
        cursor.id,
        lote,
      ]);
      return linhas.map(({ entrega_id, entrega_situacao, ...e }) => ({
        ...e,
        entrega: entrega_id && entrega_situacao ? { id: entrega_id, situacao: entrega_situacao } : null,
      }));
    },

    /** Locks these deliveries and answers those whose cycle is over (a new one may start), with their state. */
    travarFinais: (ids: readonly string[], tx: Tx) =>
      ids.length === 0 ? Promise.resolve([]) : runOnPrisma(tx, REPRODUCAO_TRAVAR_FINAIS, [ids]),

    /** Writes a delivery of each event (in the batch's order): their ids and whether each waits its turn. */
    async criarEntregas(
      a: AssinaturaParaLote,
      novas: { id: string; evento: EventoDoLote }[],
      agora: Date,
      tx: Tx,
    ): Promise<{ id: string; em_espera: boolean }[]> {
      if (novas.length === 0) return [];
      const ids = novas.map((n) => n.id);
      const eventos = novas.map((n) => n.evento.id);
      const recebidos = novas.map((n) => n.evento.recebidoEm.toISOString());
      const entidades = novas.map((n) => n.evento.entidadeId);
      return runOnPrisma(tx, REPRODUCAO_CRIAR_ENTREGAS, [
        ids,
        eventos,
        recebidos,
        entidades,
        a.entregaOrdenada,
        a.id,
        a.aplicativoAssinanteId,
        a.tipoDeEventoId,
        a.versaoDoEsquema,
        a.urlDeDestino,
        a.maximoDeTentativas,
        agora,
      ]);
    },
  };
}
export type LoteRepository = ReturnType<typeof loteRepository>;
