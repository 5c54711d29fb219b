/**
 * The pace of the fault scenarios: 1,200 events at 100/s through the gateway (12 s), the fault
 * after 300 of them. FALHAS_EVENTOS sends more (the fault stays at a quarter).
 */
const eventos = Number(process.env.FALHAS_EVENTOS ?? 1_200);
export const RITMO = { eventos, porSegundo: 100, falhaApos: Math.floor(eventos / 4) };

/**
 * The worker's timings for a drill that must end within a minute or two: retries in under a second,
 * and the sweeper resending a job left without an answer after 10 s instead of 2 min (a job lost in
 * the fault would otherwise be found only after the scenario).
 */
export const ENTREGADOR_RAPIDO = {
  DELIVERY_RETRY_DELAYS: '200ms,500ms,1s',
  DELIVERY_SWEEP_INTERVAL: '2s',
  DELIVERY_SWEEP_AGE: '10s',
};
