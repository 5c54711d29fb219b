import { executeOnPrisma, runOnPrisma } from '@hub/database';
import { periodicJob } from '@hub/jobs';
import type { Logger } from '@hub/log';
import type { Db } from '../db';
import { SITUACOES_NA_FILA, type Situacao } from '../features/eventos/eventos.schemas';
import {
  type FatiaTravada,
  RETENCAO_CHAVES,
  RETENCAO_DOBRAR_HORAS,
  RETENCAO_DOBRAR_LATENCIAS,
  RETENCAO_EVENTOS,
  RETENCAO_LATENCIAS,
  RETENCAO_MINUTOS,
  RETENCAO_RECUSADOS,
  RETENCAO_TRAVAR_HORAS,
} from './retencao.sql';

/**
 * Deliveries not final: in the queue, or in the error queue, whose messages agree one to one with
 * them and which reprocessing takes back. An event with one of them is never erased.
 */
export const SITUACOES_NAO_FINAIS: readonly Situacao[] = [...SITUACOES_NA_FILA, 'fila_de_erro'];

const DIA_MS = 86_400_000;
const HORA_MS = 3_600_000;
/** Idempotency keys answer repeats for 24 h (architecture §5); the summary reads 24 h, kept twice that. */
const CHAVES_MS = 24 * HORA_MS;
const RESUMO_MS = 48 * HORA_MS;

export interface RetencaoOptions {
  db: Db;
  logger: Logger;
  /** How long refused publications are kept (HUB_RECUSADOS_RETENCAO). */
  recusadosMs: number;
  /** Pause between passes (HUB_RETENCAO_INTERVALO). */
  intervaloMs: number;
  /** Events erased per statement: each batch is its own short transaction. */
  lote?: number;
  /** The clock; tests drive it instead of waiting. */
  relogio?: () => Date;
}

export interface Apagados {
  eventos: number;
  outbox: number;
  chaves: number;
  recusados: number;
  /** Rows of resumo_por_hora and resumo_latencia_por_hora erased or folded away. */
  horas: number;
  /** Rows of destino_minuto (a destination's attempts of one minute) past 48 h. */
  minutos: number;
}

/**
 * Erases what outlived its retention (contract §3, §6.6): events older than their type's
 * retencao_em_dias whose deliveries are all final (concluida or cancelada), with their deliveries
 * and attempts (foreign-key cascade) and the outbox rows of those deliveries; an event with a
 * delivery still in the queue or in the error queue waits until it is concluded, reprocessed or
 * cancelled; idempotency keys past 24 h; refused publications past their configured time;
 * destinations' minutes past 48 h; summary tallies past 48 h (keeping each old hour's counts of stored events, deliveries and attempts in one row) and the
 * latency histograms of those hours, whose younger ones it folds into one slice an hour once
 * no worker writes them (`horas` counts all of these rows). Everything goes in small batches, each one
 * statement (its own transaction), so no lock is held for long and publication never waits behind a purge.
 */
export function retencaoJob(options: RetencaoOptions) {
  const { db, logger } = options;
  const lote = options.lote ?? 1_000;
  const relogio = options.relogio ?? (() => new Date());

  /** Repeats a batch until it erases less than a full one. */
  async function emLotes(apagar: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      if (job.stopped) return total;
      const apagados = await apagar();
      total += apagados;
      if (apagados < lote) return total;
    }
  }

  async function eventosDoTipo(tipoId: string, limite: Date): Promise<{ eventos: number; outbox: number }> {
    let outbox = 0;
    // Where the pass has walked to in the type's events, oldest first: each batch starts after the
    // last candidate of the one before, so the events an expired day must keep (a delivery not
    // final) and the index entries of the rows just erased are walked once per pass, not once per
    // batch. An event passed over (kept, or held by another pass) is looked at again next pass.
    let depois: { recebidoEm: Date; id: string } | undefined;
    const eventos = await emLotes(async () => {
      // The oldest events of the type through evento_tipo whose deliveries are all final; a row
      // another pass holds is skipped. Their deliveries are then locked and read again: one resent
      // meanwhile (concluida back to pendente, committed after this statement's snapshot or still
      // uncommitted) keeps its event. One statement: the outbox rows of the batch's deliveries go
      // with it, then the events (whose deliveries and attempts the cascade takes). The cascade's
      // deletes of entrega, one per event, run entrega's statement-level delete trigger (the copies of
      // entrega_nao_concluida, the hour's entregas_guardadas: migrations 018 and 023) once for this
      // whole statement, over every delivery it took: PostgreSQL gathers the rows of one statement's
      // foreign-key actions into one transition table per table (total.test.ts of entregas logs it).
      // Those triggers upsert the hours of resumo_por_hora on the transaction's slice: evento's and
      // entrega's the events' hours, then tentativa's the hours the attempts started in, later than
      // their event's and so possibly after another event's of the batch: out of hour order, the
      // batch could hold a later hour's slice and wait for an earlier one, and meet in a cycle
      // (40P01) another instance's batch on the same slice (one transaction in 16) or any writer that
      // locks those hours in order. So `horas` first locks every hour the triggers will upsert, in hour
      // order (an upsert that changes nothing, or an empty row), before the deletes' triggers run at
      // the end of the statement; they then update rows the batch already holds.
      const naoFinais = [...SITUACOES_NAO_FINAIS];
      const [linha] = await runOnPrisma(db, RETENCAO_EVENTOS, [
        tipoId,
        limite,
        naoFinais,
        lote,
        depois?.recebidoEm ?? null,
        depois?.id ?? null,
      ]);
      if (!linha) return 0;
      outbox += linha.outbox;
      if (linha.ultimo_em && linha.ultimo_id) depois = { recebidoEm: linha.ultimo_em, id: linha.ultimo_id };
      return linha.eventos;
    });
    return { eventos, outbox };
  }

  /**
   * The summary's tallies of hours past 48 h are no longer read, but the stored counts of the hour
   * (eventos_guardados, entregas_guardadas, tentativas_guardadas and tentativas_com_sucesso_guardadas:
   * the totals of GET /evento, GET /entrega and GET /tentativa, the deep pages of GET /evento and
   * GET /tentativa) must stay exact. So each such hour's slices are folded into one row, in one
   * transaction: its lowest slice keeps the sums (the other tallies zeroed), the others are deleted,
   * and an hour that holds none of them any more keeps no row. An hour already folded (one row, no
   * tally) is left alone. Returns the rows folded away (every row locked here).
   *
   * The rows are locked first, in (hora, fatia) order, and their counts read as they are once
   * locked (READ COMMITTED: a slice a trigger updated meanwhile is read at its committed value), so
   * the hours' sums do not change. A row another transaction holds is skipped (SKIP LOCKED), never
   * waited for: the pass folds the hour's other slices into the lowest of those it locked (the hour's
   * sum is the same) and the skipped one at a later pass. Another instance's retention, or an
   * operator, deleting events of these hours upserts their slices in its transaction, on one slice
   * (`fatia_da_transacao()`), but not in hour order: evento's and entrega's triggers upsert the
   * events' hours, then tentativa's the hours its attempts started in, later than their event's and
   * possibly after another event's of the batch; so that transaction could hold a later hour's slice
   * and wait for an earlier one this pass held while it waited for the later one (40P01: one of the
   * two rolled back, total.test.ts of tentativas reproduces it). A pass that waits for nothing is in
   * no such cycle, whatever order the others lock in. And the folded row is an update of a row
   * already locked, not an insert: an insert into a slice would wait for another transaction's
   * uncommitted insert of it.
   */
  async function compactarHoras(antesDe: Date): Promise<number> {
    return db.$transaction(async (tx) => {
      const travadas = await runOnPrisma(tx, RETENCAO_TRAVAR_HORAS, [antesDe]);
      if (travadas.length === 0) return 0;
      const coluna = (c: keyof FatiaTravada) => travadas.map((r) => r[c]);
      await executeOnPrisma(tx, RETENCAO_DOBRAR_HORAS, [
        coluna('hora'),
        coluna('fatia'),
        coluna('eventos_guardados'),
        coluna('entregas_guardadas'),
        coluna('tentativas_guardadas'),
        coluna('tentativas_com_sucesso_guardadas'),
      ]);
      return travadas.length;
    });
  }

  /**
   * The latency histograms of the hours that ended over an hour before `agora`, folded into slice 0:
   * a summary read then sums one row per bucket for those hours instead of one per slice and bucket
   * (16 times fewer in a busy hour). No worker writes to those hours any more (a batch counts in the
   * hour of the moment it records, and a statement does not last an hour), so the fold never waits
   * for one. One statement: what it deletes is what it adds back. Returns the rows folded away.
   */
  async function dobrarLatencias(agora: number): Promise<number> {
    const antesDe = new Date(Math.floor(agora / HORA_MS) * HORA_MS - HORA_MS);
    const [linha] = await runOnPrisma(db, RETENCAO_DOBRAR_LATENCIAS, [new Date(agora - RESUMO_MS), antesDe]);
    return linha?.dobradas ?? 0;
  }

  async function passar(): Promise<Apagados> {
    const agora = relogio().getTime();
    const apagados: Apagados = { eventos: 0, outbox: 0, chaves: 0, recusados: 0, horas: 0, minutos: 0 };
    const tipos = await db.tipoDeEvento.findMany({ select: { id: true, retencaoEmDias: true } });
    for (const tipo of tipos) {
      const { eventos, outbox } = await eventosDoTipo(tipo.id, new Date(agora - tipo.retencaoEmDias * DIA_MS));
      apagados.eventos += eventos;
      apagados.outbox += outbox;
    }
    const chaves = new Date(agora - CHAVES_MS);
    apagados.chaves = await emLotes(() => executeOnPrisma(db, RETENCAO_CHAVES, [chaves, lote]));
    const recusados = new Date(agora - options.recusadosMs);
    apagados.recusados = await emLotes(() => executeOnPrisma(db, RETENCAO_RECUSADOS, [recusados, lote]));
    apagados.horas = await compactarHoras(new Date(agora - RESUMO_MS));
    // The latency histograms of those hours are read by nothing else: erased, a batch at a time.
    apagados.horas += await emLotes(() => executeOnPrisma(db, RETENCAO_LATENCIAS, [new Date(agora - RESUMO_MS), lote]));
    apagados.horas += await dobrarLatencias(agora);
    // The destinations' minutes are read for the last 24 h at most (GET /destino, a subscription's
    // health): kept 48 h, like the hourly tallies, then erased a batch at a time.
    apagados.minutos = await emLotes(() => executeOnPrisma(db, RETENCAO_MINUTOS, [new Date(agora - RESUMO_MS), lote]));
    return apagados;
  }

  // Stopped, the pass under way ends after its current batch (emLotes) and stop() waits for it.
  const job = periodicJob({
    name: 'retention',
    logger,
    pauseMs: options.intervaloMs,
    /** One whole pass: what it erased. */
    async run(): Promise<Apagados> {
      const apagados = await passar();
      if (Object.values(apagados).some((n) => n > 0)) logger.info({ apagados }, 'retention: expired rows erased');
      return apagados;
    },
  });
  return job;
}
export type RetencaoJob = ReturnType<typeof retencaoJob>;
