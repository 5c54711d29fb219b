/**
 * A latency of the summary (ms, read from a histogram, so within 4.5 %) in the unit that suits it:
 * "85 ms", "1,4 s", "3,2 min", "2,5 h"; "—" for an hour in which no delivery concluded.
 */
export function formatarLatencia(ms: number | null): string {
  if (ms === null) return '—';
  const numero = (v: number, casas: number) => v.toLocaleString('pt-BR', { maximumFractionDigits: casas });
  if (ms < 1_000) return `${numero(ms, ms < 10 ? 1 : 0)} ms`;
  if (ms < 60_000) return `${numero(ms / 1_000, 1)} s`;
  if (ms < 3_600_000) return `${numero(ms / 60_000, 1)} min`;
  return `${numero(ms / 3_600_000, 1)} h`;
}
