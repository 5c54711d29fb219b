import { Gauge, Histogram } from 'prom-client';

/** The readiness of each dependency: resolves "ok" or "falha: <why>" (never rejects). */
export type VerificarProntidao = () => Promise<[string, string][]>;

/**
 * `hub_prontidao{dependencia}`: 1 when that check of GET /saude/prontidao passes, 0 when it fails,
 * run again at each scrape. A service that answers /metrics but is not ready (its database or broker
 * unreachable) is invisible to `up`; this is what an alert on readiness reads.
 */
export function prontidaoMetric(verificar: VerificarProntidao): Gauge {
  return new Gauge({
    registers: [],
    name: 'hub_prontidao',
    help: 'readiness of each dependency of GET /saude/prontidao, checked at this scrape (1 ok, 0 failing)',
    labelNames: ['dependencia'] as const,
    async collect() {
      this.reset();
      for (const [dependencia, estado] of await verificar()) this.set({ dependencia }, estado === 'ok' ? 1 : 0);
    },
  });
}

/**
 * `hub_group_commit_items{escrita}`: items per statement of each group commit (@hub/database's
 * GroupCommit), observed as each statement starts. Its mean is what group commit saves: one
 * statement, one round trip and one commit shared by that many publications, claims or records.
 */
export function itensPorEscritaMetric(): Histogram<'escrita'> {
  return new Histogram({
    registers: [],
    name: 'hub_group_commit_items',
    help: 'items written per statement by a group commit (publicacao; reivindicacao, registro, liberacao, vez in the worker)',
    labelNames: ['escrita'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
  });
}
