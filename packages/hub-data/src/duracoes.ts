/**
 * The duration histogram of destino_minuto.duracoes: attempts per bucket, each bucket counting the
 * durations up to its bound (ms) and above the previous one; the last counts everything longer
 * than 10 s. The delivery workers add to it; hub-api reads percentiles from it.
 */
export const LIMITES_DE_DURACAO_MS = [5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000] as const;
export const BALDES_DE_DURACAO = LIMITES_DE_DURACAO_MS.length + 1;

/** The bucket of one duration. */
export function baldeDaDuracao(ms: number): number {
  const i = LIMITES_DE_DURACAO_MS.findIndex((limite) => ms <= limite);
  return i === -1 ? LIMITES_DE_DURACAO_MS.length : i;
}

/** A histogram with one duration added (a new array). */
export function somarDuracao(baldes: readonly number[], ms: number): number[] {
  const soma = baldes.length === BALDES_DE_DURACAO ? [...baldes] : new Array<number>(BALDES_DE_DURACAO).fill(0);
  soma[baldeDaDuracao(ms)]! += 1;
  return soma;
}

/**
 * The q-quantile (0 < q ≤ 1) of a histogram as the bound of the bucket it falls in (so "p99 ≤ this");
 * in the last, open bucket it is its lower bound, 10000. Null without attempts.
 */
export function percentil(baldes: readonly number[], q: number): number | null {
  const total = baldes.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const alvo = Math.ceil(q * total);
  let acumulado = 0;
  for (let i = 0; i < baldes.length; i++) {
    acumulado += baldes[i]!;
    if (acumulado >= alvo) return LIMITES_DE_DURACAO_MS[Math.min(i, LIMITES_DE_DURACAO_MS.length - 1)]!;
  }
  return LIMITES_DE_DURACAO_MS[LIMITES_DE_DURACAO_MS.length - 1]!;
}
