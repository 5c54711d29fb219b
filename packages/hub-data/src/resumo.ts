/**
 * Where a count lands in resumo_por_hora, the summary's tallies (migration 004) that hub-api's
 * publication, the delivery workers and the triggers on evento, entrega and tentativa (migrations
 * 005, 023 and 024) add to: the hour is the UTC hour of the instant, `date_trunc('hour', instante,
 * 'UTC')`; the slice is one of the hour's FATIAS_DO_RESUMO rows, so that concurrent writers rarely
 * wait on the same row (only the sum of an hour's slices means something): a random one here, the
 * transaction's in the triggers and in the worker's record of attempts (`fatia_da_transacao()`, its
 * id modulo 16: a statement that writes events and deliveries, or attempts and their tallies, locks
 * one slice of the hour, not two). `resumo.test.ts` checks both against the migrations.
 */

const HORA_MS = 3_600_000;

/** Rows per hour of resumo_por_hora: `check (fatia between 0 and 15)`, `txid_current() % 16` in the triggers. */
export const FATIAS_DO_RESUMO = 16;

/** The hour of resumo_por_hora an instant counts in (the start of its UTC hour). */
export const horaDoResumo = (instante: Date): Date => new Date(Math.floor(instante.getTime() / HORA_MS) * HORA_MS);

/** A slice of the hour to add to, at random (`aleatorio` in [0, 1), for tests). */
export const fatiaDoResumo = (aleatorio: () => number = Math.random): number =>
  Math.floor(aleatorio() * FATIAS_DO_RESUMO);
