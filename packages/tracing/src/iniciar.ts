import { NodeSDK } from '@opentelemetry/sdk-node';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { marcarLigado } from './estado';

let sdk: NodeSDK | undefined;

const definida = (nome: string, env: NodeJS.ProcessEnv = process.env) => (env[nome] ?? '').trim() !== '';

/**
 * Whether this process records and exports spans: only when the standard variables ask for an
 * exporter (OTEL_TRACES_EXPORTER other than `none`, or an OTLP endpoint), and OTEL_SDK_DISABLED is
 * not true. Otherwise nothing is exported, and the trace context is still carried (rastro.ts).
 */
export function exportacaoPedida(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exportadores = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (exportadores.length > 0) return exportadores.some((e) => e !== 'none');
  return definida('OTEL_EXPORTER_OTLP_ENDPOINT', env) || definida('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', env);
}

/** Requests that are the platform's own plumbing, not work: health, readiness and metrics. */
const encanamento = (url: string | undefined) =>
  url !== undefined && (url.startsWith('/saude') || url.startsWith('/metrics'));

/**
 * Starts OpenTelemetry's Node SDK for this process when the OTEL_* variables ask for an exporter
 * (docs/decisions/tracing.md). Must run before express and pg are required:
 * each service's main.ts imports its `rastreamento.ts` first. Configuration is the SDK's own
 * (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_*, OTEL_TRACES_SAMPLER, OTEL_RESOURCE_ATTRIBUTES…);
 * `servico` is the service name when OTEL_SERVICE_NAME is not set. Metrics and logs stay with
 * /metrics and the JSON lines unless OTEL_METRICS_EXPORTER or OTEL_LOGS_EXPORTER say otherwise.
 */
export function iniciarRastreamento(servico: string): boolean {
  if (sdk || !exportacaoPedida()) return false;
  sdk = new NodeSDK({
    serviceName: definida('OTEL_SERVICE_NAME') ? undefined : servico,
    ...(definida('OTEL_METRICS_EXPORTER') ? {} : { metricReaders: [] }),
    ...(definida('OTEL_LOGS_EXPORTER') ? {} : { logRecordProcessors: [] }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => encanamento(req.url),
        // The gateway's proxy sends its headers as a raw array, which the instrumentation would
        // copy into an object and break: it carries the context itself (rastroDeSaida).
        ignoreOutgoingRequestHook: (options) => Array.isArray(options.headers),
      }),
      // Routes and handlers; a span per middleware of every request would be most of the spans.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  marcarLigado();
  return true;
}

/** Exports what is left and stops (at the end of a process's shutdown). */
export async function pararRastreamento(): Promise<void> {
  const atual = sdk;
  sdk = undefined;
  await atual?.shutdown().catch(() => undefined);
}
