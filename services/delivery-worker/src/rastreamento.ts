// Imported first by main.ts: OpenTelemetry's instrumentations must be in place before express and
// pg are loaded (docs/decisions/tracing.md). Nothing starts unless the OTEL_*
// variables ask for an exporter.
import { iniciarRastreamento } from '@hub/tracing/iniciar';

iniciarRastreamento('delivery-worker');
