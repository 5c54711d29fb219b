import { itensPorEscritaMetric } from '@hub/http';
import { outboxLagMetric } from '@hub/outbox';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Fila } from './features/fila/fila.schemas';
import type { FilasDaTopologia } from './features/fila/fila.service';

/** hub-api's own metrics, served by /metrics next to the frame's (requests by route and status). */
export function criarMetricas() {
  const aceitos = new Counter({
    registers: [],
    name: 'hub_eventos_aceitos_total',
    help: 'events accepted and stored (POST /eventos, POST /evento, platform events); repeats of an Idempotency-Key not counted',
  });
  const recusados = new Counter({
    registers: [],
    name: 'hub_eventos_recusados_total',
    help: 'publications refused (stored as evento recusado), by codigo',
    labelNames: ['codigo'] as const,
  });
  const sobrecarga = new Counter({
    registers: [],
    name: 'hub_publicacoes_sobrecarga_total',
    help: 'publications answered 503 sobrecarregado before being read (HUB_PUBLICACOES_EM_ANDAMENTO under way already); not stored',
  });
  const itensPorEscrita = itensPorEscritaMetric();
  return {
    aceitos,
    recusados,
    sobrecarga,
    itensPorEscrita,
    /** Registers them, with the outbox lag and the delivery queues read at each scrape. */
    registrar(registry: Registry, fontes: { atrasoDaOutbox: () => Promise<number>; filas?: FilasDaTopologia }) {
      registry.registerMetric(aceitos);
      registry.registerMetric(recusados);
      registry.registerMetric(sobrecarga);
      registry.registerMetric(itensPorEscrita);
      registry.registerMetric(outboxLagMetric(fontes.atrasoDaOutbox));
      const { filas } = fontes;
      if (!filas) return;
      let leitura: ReturnType<FilasDaTopologia['listar']> | undefined;
      // One read of RabbitMQ per scrape for both gauges: a scrape starts every collect() at once,
      // so the second finds the first's read in flight. Dropped as soon as it settles: kept 500 ms
      // longer, a scrape right after RabbitMQ went away showed the depths read before it did.
      const filasAgora = () => {
        leitura ??= filas.listar().finally(() => {
          leitura = undefined;
        });
        return leitura;
      };
      const porFila = (name: string, help: string, valor: (f: Fila) => number) =>
        new Gauge({
          registers: [],
          name,
          help,
          labelNames: ['fila', 'papel'] as const,
          async collect() {
            this.reset();
            // RabbitMQ away: no samples this scrape, and /metrics still answers at once.
            for (const f of (await filasAgora().catch(() => undefined)) ?? [])
              this.set({ fila: f.nome, papel: f.papel }, valor(f));
          },
        });
      registry.registerMetric(
        porFila(
          'hub_fila_mensagens',
          'messages ready in each queue of the delivery topology (work, delay steps, error, destination queues)',
          (f) => f.mensagens,
        ),
      );
      registry.registerMetric(
        porFila(
          'hub_fila_consumidores',
          'consumers attached to each queue of the delivery topology',
          (f) => f.consumidores,
        ),
      );
    },
  };
}
export type MetricasDoHub = ReturnType<typeof criarMetricas>;
