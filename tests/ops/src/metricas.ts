import path from 'node:path';
import { createHttpApp } from '@hub/http';
import { createLogger } from '@hub/log';
import request from 'supertest';
import { criarMetricas as metricasDoWorker } from '../../../services/delivery-worker/src/metricas';
import { createMetrics as metricasDoGateway } from '../../../services/gateway/src/health/metrics';
import { criarMetricas as metricasDoHub } from '../../../services/hub-api/src/metricas';

export const ROOT = path.resolve(__dirname, '../../..');

/** Series Prometheus adds to every target itself. */
const DO_PROMETHEUS = ['up', 'scrape_duration_seconds', 'scrape_samples_scraped'];

/**
 * The metric names in a Prometheus text exposition, from its `# TYPE` lines (a labelled counter
 * nobody incremented yet has no sample, but its TYPE line is there): a histogram is its _bucket,
 * _sum and _count series, a summary its quantiles, _sum and _count.
 */
export function nomesDaExposicao(texto: string): string[] {
  return [...texto.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, nome, tipo]) =>
    tipo === 'histogram'
      ? [`${nome}_bucket`, `${nome}_sum`, `${nome}_count`]
      : tipo === 'summary'
        ? [nome!, `${nome}_sum`, `${nome}_count`]
        : [nome!],
  );
}

/**
 * Every metric name the services serve at /metrics, read from what they really serve: the frame of
 * @hub/http (request durations, process defaults, readiness) with hub-api's and the worker's own
 * metrics registered as their start does, and the gateway's hand-written exposition. Their sources
 * (database, RabbitMQ) are stand-ins: only the names are read here.
 */
export async function metricasExportadas(): Promise<Set<string>> {
  const logger = createLogger('ops-tests');
  const hub = metricasDoHub();
  const worker = metricasDoWorker();
  // Each service's own frame, as each is its own process: hub-api and the worker both serve
  // hub_group_commit_items, which one registry would refuse twice.
  const frame = (metrics: Parameters<typeof createHttpApp>[0]['metrics']) =>
    createHttpApp({
      service: 'ops-tests',
      logger,
      routers: [],
      readiness: { postgresql: async () => undefined },
      metrics,
    });
  const doHub = frame((registry) =>
    hub.registrar(registry, {
      atrasoDaOutbox: async () => 0,
      filas: {
        listar: async () => [
          {
            nome: 'delivery-worker.entregas.v2',
            papel: 'trabalho',
            origem: null,
            mensagens: 0,
            consumidores: 1,
            declarada: true,
          },
        ],
        buscar: async () => {
          throw new Error('not used');
        },
        espiar: async () => {
          throw new Error('not used');
        },
      },
    }),
  );
  const doWorker = frame((registry) => worker.registrar(registry));
  const gateway = metricasDoGateway(() => undefined, logger);
  const textos = await Promise.all([
    request(doHub).get('/metrics').expect(200),
    request(doWorker).get('/metrics').expect(200),
    request(gateway.app).get('/metrics').expect(200),
  ]);
  return new Set([...DO_PROMETHEUS, ...textos.flatMap((r) => nomesDaExposicao(r.text))]);
}

const PALAVRAS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression reads: what is left once strings, label matchers, ranges,
 * grouping clauses and Grafana's variables are taken out, less functions and keywords.
 */
export function metricasDaExpressao(expr: string): string[] {
  const limpa = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\$\{?\w+\}?/g, '1m')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const nomes = [...limpa.matchAll(/(?<![\w.])[a-zA-Z_:][\w:]*(?![\w:])(?!\s*\()/g)].map((m) => m[0]);
  return [...new Set(nomes.filter((n) => !PALAVRAS.has(n.toLowerCase())))];
}
