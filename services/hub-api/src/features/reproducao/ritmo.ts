/**
 * How many events a replay's batch takes, so that a replay goes at most `porSegundo` events a second
 * (docs/decisions/replay-engine.md): a replay gets one batch per round of the runner and rounds are
 * `pausaMs` apart, so small batches often, never a burst of `lote` jobs at once ahead of live ones.
 * `porSegundo` 0, or no pause, leaves only `lote` (the bound on a transaction and its memory).
 */
export function eventosPorLote({ lote, porSegundo, pausaMs }: { lote: number; porSegundo: number; pausaMs: number }) {
  if (porSegundo === 0 || pausaMs === 0) return lote;
  return Math.max(1, Math.min(lote, Math.ceil((porSegundo * pausaMs) / 1000)));
}
