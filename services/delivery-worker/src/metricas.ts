import { itensPorEscritaMetric } from '@hub/http';
import { Counter, Gauge, Histogram, type Metric, type Registry } from 'prom-client';

const VALOR_DO_CIRCUITO = { fechado: 0, meio_aberto: 1, aberto: 2 } as const;

/** The POSTs: how many, by result and destination, and how long each took. */
function metricasDasTentativas() {
  const tentativas = new Counter({
    registers: [],
    name: 'hub_delivery_attempts_total',
    help: 'delivery attempts made, by result (sucesso, falha)',
    labelNames: ['resultado'] as const,
  });
  // One series per destination origin and result, like hub_delivery_destination_in_flight: as many as
  // the origins the subscriptions point at, which an operator reads per destination (GET /destino).
  const tentativasPorDestino = new Counter({
    registers: [],
    name: 'hub_delivery_destination_attempts_total',
    help: 'delivery attempts made by this process per destination origin, by result (sucesso, falha)',
    labelNames: ['origem', 'resultado'] as const,
  });
  const duracao = new Histogram({
    registers: [],
    name: 'hub_delivery_attempt_duration_seconds',
    help: 'duration of one POST to a destination',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    labelNames: ['resultado'] as const,
  });
  return { tentativas, tentativasPorDestino, duracao };
}

/** The jobs taken and what became of them and their deliveries. */
function metricasDosTrabalhos() {
  const trabalhos = new Counter({
    registers: [],
    name: 'hub_delivery_jobs_total',
    help: "jobs taken from the work queue, by outcome (tentado, descartado: delivery final, unknown, not due yet or held by another job, cancelado, adiado, pausado: destination paused, circuito: its circuit open, duplicado: waited for a job of the same delivery under way, envenenado: a poison job put in the error queue, encaminhado: sent on to its isolated destination's own queue; liberado: not taken but published, an ordered delivery whose entity's turn came)",
    labelNames: ['desfecho'] as const,
  });
  const situacoes = new Counter({
    registers: [],
    name: 'hub_deliveries_total',
    help: 'deliveries that reached a state after an attempt (concluida, aguardando_nova_tentativa, fila_de_erro, cancelada)',
    labelNames: ['situacao'] as const,
  });
  const emVoo = new Gauge({ registers: [], name: 'hub_delivery_in_flight', help: 'POSTs under way' });
  const adiadas = new Counter({
    registers: [],
    name: 'hub_delivery_deferred_total',
    help: 'jobs sent back to the shortest delay queue because their destination was at its concurrency limit',
  });
  const recuperadas = new Counter({
    registers: [],
    name: 'hub_delivery_swept_total',
    help: 'jobs the sweeper enqueued again for deliveries whose job was lost',
  });
  return { trabalhos, situacoes, emVoo, adiadas, recuperadas };
}

/** The destinations' reads, own queues and circuits. */
function metricasDosDestinos() {
  const destinosLidos = new Counter({
    registers: [],
    name: 'hub_delivery_destination_reads_total',
    help: 'passes that read the destination rows (limits, pause) and the number of workers',
  });
  const isolamentos = new Counter({
    registers: [],
    name: 'hub_delivery_isolation_changes_total',
    help: "changes this process made to destinations' own queues (isolada: a destination got one, saindo: it started going back, removida: its queue was removed)",
    labelNames: ['mudanca'] as const,
  });
  const isoladas = new Gauge({
    registers: [],
    name: 'hub_delivery_isolated_destinations',
    help: 'destinations with a queue of their own (isolated, going back or being removed), as this process last read them',
  });
  const transicoesDoCircuito = new Counter({
    registers: [],
    name: 'hub_delivery_circuit_transitions_total',
    help: "transitions of destination circuits this process made, by origin and new state (aberto: failures, or a failed probe; meio_aberto: a probe taken; fechado: the probe succeeded); a close by hand is hub-api's",
    labelNames: ['origem', 'para'] as const,
  });
  return { destinosLidos, isolamentos, isoladas, transicoesDoCircuito };
}

/** The worker's own metrics, served by /metrics next to the process defaults. */
export function criarMetricas() {
  const metricas = {
    ...metricasDasTentativas(),
    ...metricasDosTrabalhos(),
    ...metricasDosDestinos(),
    itensPorEscrita: itensPorEscritaMetric(),
  };
  return {
    ...metricas,
    /**
     * Registers them, with POSTs under way per destination origin and the state of the circuits
     * (origins whose circuit is not closed) read at each scrape.
     */
    registrar(
      registry: Registry,
      emAndamentoPorOrigem: () => [string, number][] = () => [],
      circuitos: () => [string, 'fechado' | 'aberto' | 'meio_aberto'][] = () => [],
    ) {
      const porOrigem = new Gauge({
        registers: [],
        name: 'hub_delivery_destination_in_flight',
        help: 'POSTs under way per destination origin in this process',
        labelNames: ['origem'] as const,
        collect() {
          this.reset();
          for (const [origem, n] of emAndamentoPorOrigem()) this.set({ origem }, n);
        },
      });
      const estado = new Gauge({
        registers: [],
        name: 'hub_delivery_circuit_state',
        help: "state of a destination origin's circuit as this worker obeys it: 0 fechado, 1 meio_aberto, 2 aberto (only origins whose circuit is not closed: no series means fechado)",
        labelNames: ['origem'] as const,
        collect() {
          this.reset();
          for (const [origem, circuito] of circuitos()) this.set({ origem }, VALOR_DO_CIRCUITO[circuito]);
        },
      });
      for (const m of [...Object.values(metricas), porOrigem, estado] as Metric[]) registry.registerMetric(m);
    },
  };
}
export type Metricas = ReturnType<typeof criarMetricas>;
