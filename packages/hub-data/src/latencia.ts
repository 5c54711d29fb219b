/**
 * The latency of deliveries in the summary: from the event's acceptance (evento.recebido_em, copied
 * into entrega.evento_recebido_em) to the delivery's conclusion (entrega.entregue_em), in whole
 * milliseconds. The worker adds each concluded delivery to one bucket of a fixed histogram per hour
 * and slice (resumo_latencia_por_hora, migration 021), in the statement that records the attempt;
 * the summary sums an hour's buckets and reads its percentiles from them. docs/decisions/summary-and-latency.md says why, and the bound below.
 *
 * Buckets: the lower bounds LIMITES_DA_LATENCIA (ms), 8 per doubling from 1 ms up to 2^32 ms
 * (about 49.7 days), rounded to whole milliseconds and without repeats. Bucket 0 holds 0 ms; bucket
 * i (1 ≤ i < LIMITES_DA_LATENCIA.length) holds [LIMITES[i-1], LIMITES[i]); the last bucket
 * (i = LIMITES.length) holds everything from 2^32 ms on. PostgreSQL's `width_bucket(ms, limites)`
 * gives the same index as baldeDaLatencia, from the same array (sent as a parameter).
 */

/** Buckets per doubling of the latency. */
export const BALDES_POR_DOBRO = 8;
/** The last lower bound is 2^DOBROS_DA_LATENCIA ms. */
export const DOBROS_DA_LATENCIA = 32;

/** The lower bounds of the buckets 1…n in ms, strictly increasing (bucket 0 is below the first: 0 ms). */
export const LIMITES_DA_LATENCIA: readonly number[] = Object.freeze(
  Array.from({ length: BALDES_POR_DOBRO * DOBROS_DA_LATENCIA + 1 }, (_, i) =>
    Math.round(2 ** (i / BALDES_POR_DOBRO)),
  ).filter((limite, i, todos) => i === 0 || limite !== todos[i - 1]),
);

/** Buckets in all: 0 (0 ms), one per lower bound. */
export const QUANTIDADE_DE_BALDES = LIMITES_DA_LATENCIA.length + 1;

/**
 * The largest relative error of a percentile read from the buckets against the exact one, for
 * latencies under 2^32 ms: `latenciaDoBalde` is within this fraction of every whole millisecond of
 * its bucket (latencia.unit.test.ts checks it bucket by bucket).
 */
export const ERRO_MAXIMO_DA_LATENCIA = 0.045;

/** The bucket of a latency in ms (negative, from clocks apart: 0; fractions count in the bucket of their floor). */
export function baldeDaLatencia(ms: number): number {
  const inteiro = Math.max(0, Math.floor(ms));
  // the number of lower bounds ≤ inteiro, as width_bucket counts them
  let baixo = 0;
  let alto = LIMITES_DA_LATENCIA.length;
  while (baixo < alto) {
    const meio = (baixo + alto) >> 1;
    if ((LIMITES_DA_LATENCIA[meio] as number) <= inteiro) baixo = meio + 1;
    else alto = meio;
  }
  return baixo;
}

/**
 * The value a bucket stands for, in ms to a tenth: the geometric middle of the first and last whole
 * milliseconds it holds (so the error is the same fraction either way); 0 for bucket 0; the lower
 * bound (2^32 ms) for the last, open one.
 */
export function latenciaDoBalde(balde: number): number {
  if (balde <= 0) return 0;
  const primeiro = LIMITES_DA_LATENCIA[balde - 1];
  if (primeiro === undefined) throw new RangeError(`no latency bucket ${balde}`);
  const seguinte = LIMITES_DA_LATENCIA[balde];
  if (seguinte === undefined) return primeiro;
  return Math.round(Math.sqrt(primeiro * (seguinte - 1)) * 10) / 10;
}

/**
 * The `p`th percentile (an integer, 1 to 100) of a histogram (entregas per bucket), nearest rank:
 * the value of the bucket that holds the ceil(p × n / 100)-th smallest latency (integers, so 99 % of
 * 100 is 99, never 99.00000000000001). null when the histogram is empty.
 */
export function percentilDaLatencia(baldes: ReadonlyMap<number, number>, p: number): number | null {
  if (!Number.isInteger(p) || p < 1 || p > 100) throw new RangeError(`a percentile is an integer 1 to 100, not ${p}`);
  const ordenados = [...baldes].filter(([, n]) => n > 0).sort(([a], [b]) => a - b);
  const total = ordenados.reduce((soma, [, n]) => soma + n, 0);
  if (total === 0) return null;
  const posto = Math.ceil((p * total) / 100);
  let acumulado = 0;
  for (const [balde, n] of ordenados) {
    acumulado += n;
    if (acumulado >= posto) return latenciaDoBalde(balde);
  }
  return latenciaDoBalde(ordenados[ordenados.length - 1]?.[0] as number);
}
