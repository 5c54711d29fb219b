import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@hub/tracing';
import { rastrearEmMemoria } from '@hub/tracing/em-memoria';
import { Remetente } from './remetente';
import { ASSINATURA, CORPO } from './remetente.test-support';

// With tracing on, each POST is a CLIENT span made by the Remetente (no instrumentation sees
// undici's requests), and the subscriber's traceparent names that span (docs/decisions/delivery-worker-http-client.md). Its parent here is the `rastro` given: this file has
// no context manager, so there is no active span (the worker's attempt span, which
// tests/platform's rastreamento.test.ts sees as the parent).

const spans = rastrearEmMemoria();
/** OpenTelemetry's SpanStatusCode (UNSET, ERROR), which this package does not import. */
const SpanStatusCode = { UNSET: 0, ERROR: 2 } as const;

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PAI = 'b7ad6b7169203331';
const RASTRO = { traceparent: `00-${TRACE}-${PAI}-01` };

let server: http.Server;
let porta: number;
const recebidos: (string | undefined)[] = [];
let remetente: Remetente;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    recebidos.push(req.headers.traceparent as string | undefined);
    req.resume();
    req.on('end', () => res.writeHead(req.url === '/falha' ? 500 : 204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  porta = (server.address() as AddressInfo).port;
  remetente = new Remetente({ timeoutMs: 2_000, ambiente: 'LOCALHOST', allowlist: [], socketsPorOrigem: 2 });
});
afterAll(async () => {
  await remetente.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => spans.reset());

const unico = () => {
  const terminados = spans.getFinishedSpans();
  expect(terminados).toHaveLength(1);
  return terminados[0]!;
};

it("When a POST is sent with tracing on, then it is a CLIENT span child of the given context, and the subscriber's traceparent names it", async () => {
  const resultado = await remetente.enviar(`http://eu:segredo@127.0.0.1:${porta}/ok?x=1`, CORPO, ASSINATURA, RASTRO);
  expect(resultado.sucesso).toBe(true);
  const span = unico();
  expect(span).toMatchObject({ name: 'POST', kind: SpanKind.CLIENT });
  expect(span.parentSpanContext?.spanId).toBe(PAI);
  expect(span.spanContext().traceId).toBe(TRACE);
  expect(recebidos.at(-1)).toBe(`00-${TRACE}-${span.spanContext().spanId}-01`);
  expect(span.attributes).toEqual({
    'http.request.method': 'POST',
    'url.full': `http://127.0.0.1:${porta}/ok?x=1`,
    'server.address': '127.0.0.1',
    'server.port': porta,
    'http.response.status_code': 204,
  });
  expect(span.status.code).toBe(SpanStatusCode.UNSET);
});

it('When the answer is a 500, then the span is an error of type 500', async () => {
  await remetente.enviar(`http://127.0.0.1:${porta}/falha`, CORPO, ASSINATURA, RASTRO);
  const span = unico();
  expect(span.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' });
  expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'HTTP 500' });
});

it('When no answer comes (the connection refused), then the span is an error named by its code', async () => {
  const fechado = http.createServer();
  await new Promise<void>((resolve) => fechado.listen(0, '127.0.0.1', resolve));
  const { port } = fechado.address() as AddressInfo;
  await new Promise<void>((resolve) => fechado.close(() => resolve()));
  const resultado = await remetente.enviar(`http://127.0.0.1:${port}/ok`, CORPO, ASSINATURA, RASTRO);
  const span = unico();
  expect(span.attributes['error.type']).toBe('ECONNREFUSED');
  expect(span.attributes).not.toHaveProperty('http.response.status_code');
  expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: resultado.erro });
});

it('When the destination is refused before sending, then no span is made (no POST was)', async () => {
  const resultado = await remetente.enviar('ftp://exemplo.com/x', CORPO, ASSINATURA, RASTRO);
  expect(resultado.sucesso).toBe(false);
  expect(spans.getFinishedSpans()).toHaveLength(0);
});
