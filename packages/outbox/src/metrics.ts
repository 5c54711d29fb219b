import { Gauge } from 'prom-client';

/**
 * `hub_outbox_lag_seconds`: the age of the oldest outbox row not yet published, read at each
 * scrape. Zero while the relay keeps up; growing while RabbitMQ is down or the relay is behind.
 */
export function outboxLagMetric(lerAtrasoSegundos: () => Promise<number>): Gauge {
  let ultimo = 0;
  return new Gauge({
    registers: [],
    name: 'hub_outbox_lag_seconds',
    help: 'age of the oldest outbox row not yet published to RabbitMQ (0: none waiting)',
    async collect() {
      // The database down must not take /metrics with it (that is when they matter): the last value stays.
      ultimo = await lerAtrasoSegundos().catch(() => ultimo);
      this.set(ultimo);
    },
  });
}
