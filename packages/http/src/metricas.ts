import { Gauge } from 'prom-client';

/**
 * `hub_outbox_lag_seconds`: the age of the oldest outbox row not yet published, read at each
 * scrape. Zero while the relay keeps up; growing while RabbitMQ is down or the relay is behind.
 */
export function outboxLagMetric(lerAtrasoSegundos: () => Promise<number>): Gauge {
  return new Gauge({
    registers: [],
    name: 'hub_outbox_lag_seconds',
    help: 'age of the oldest outbox row not yet published to RabbitMQ (0: none waiting)',
    async collect() {
      this.set(await lerAtrasoSegundos());
    },
  });
}
