import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { marcarLigado } from './estado';

/**
 * Tests of code that makes spans by hand, in the test's own process: a tracer provider that keeps
 * every ended span in memory, the W3C propagator, and this module's state switched on (as when
 * the SDK starts). For one test file (jest gives each its own globals).
 */
export function rastrearEmMemoria(): InMemorySpanExporter {
  const exportador = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exportador)] }));
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  marcarLigado();
  return exportador;
}
export type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
