import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@hub/testing';
import { closeConnections, sendRaw } from '../http-client';
import { type Platform, startPlatform } from '../platform';
import { type Criar, registrarRastreamento } from './rastreamento.test-support';

/**
 * The trace context without a collector (issue 21, docs/decisions/tracing.md):
 * no OTEL_* variable, so no service starts the SDK, and still every POST a subscriber gets carries
 * a traceparent of the publication's trace — the publisher's own when it sent one, through the
 * gateway, hub-api, the job in RabbitMQ and each retry; a new one from the gateway when it did not.
 */

interface Recebida {
  caminho: string;
  eventoId: string;
  traceparent: string | undefined;
  tracestate: string | undefined;
  status: number;
}

let platform: Platform;
let server: http.Server;
const recebidas: Recebida[] = [];
let tipoId: string;
let publicador: string;

beforeAll(async () => {
  // /ok answers 204; /uma-falha 500 to a delivery's first POST, 204 after.
  server = http.createServer((req, res) => {
    const partes: Buffer[] = [];
    req.on('data', (p: Buffer) => partes.push(p));
    req.on('end', () => {
      const eventoId = (JSON.parse(Buffer.concat(partes).toString('utf8')) as { id: string }).id;
      const caminho = req.url ?? '/';
      const antes = recebidas.filter((r) => r.eventoId === eventoId && r.caminho === caminho).length;
      const status = caminho === '/uma-falha' && antes === 0 ? 500 : 204;
      recebidas.push({
        caminho,
        eventoId,
        traceparent: req.headers.traceparent as string | undefined,
        tracestate: req.headers.tracestate as string | undefined,
        status,
      });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const semOtel = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => k.startsWith('OTEL_'))
      .map((k) => [k, undefined]),
  );
  platform = await startPlatform({
    env: {
      gateway: semOtel,
      'hub-api': semOtel,
      'delivery-worker': { ...semOtel, DELIVERY_RETRY_DELAYS: '200ms' },
    },
  });
  const master = await platform.userToken('master.sem-coletor@empresa.com.br', { master: true });
  const gw: Criar = async (path, body) => {
    const r = await post(master, path, body);
    if (r.status >= 300) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { id: string };
  };
  tipoId = await registrarRastreamento(
    gw,
    {
      loja: ['Loja sem coletor', 'loja-sem-coletor'],
      erp: ['ERP sem coletor', 'erp-sem-coletor'],
      tipo: 'pedido.sem_coletor',
    },
    ['/ok', '/uma-falha'].map((caminho) => `${base}${caminho}`),
  );
  publicador = await platform.applicationToken('loja-sem-coletor');
}, 240_000);

afterAll(async () => {
  closeConnections();
  await platform?.stop();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
}, 60_000);

async function post(token: string, path: string, body: unknown, extra: Record<string, string> = {}) {
  const r = await sendRaw(platform.gatewayUrl, {
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra },
    body: Buffer.from(JSON.stringify(body)),
  });
  return { status: r.status, body: JSON.parse(r.text || 'null') as unknown };
}

async function publicar(extra: Record<string, string> = {}): Promise<string> {
  const r = await post(
    publicador,
    '/eventos',
    { tipo_de_evento_id: tipoId, versao_do_esquema: 1, entidade_id: 'P-1', dados: { n: 1 } },
    extra,
  );
  expect(r.status).toBe(201);
  return (r.body as { id: string }).id;
}

const posts = (eventoId: string, caminho: string, quantos: number) =>
  waitFor(
    () => {
      const achadas = recebidas.filter((r) => r.eventoId === eventoId && r.caminho === caminho);
      return achadas.length >= quantos ? achadas : undefined;
    },
    { timeoutMs: 20_000, what: `${quantos} POST(s) of ${eventoId} to ${caminho}` },
  );

test('When a publisher sends a traceparent and no collector runs, then the subscriber gets it, on the first attempt and on the retry', async () => {
  const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
  const eventoId = await publicar({ traceparent, tracestate: 'loja=1' });
  const [ok] = await posts(eventoId, '/ok', 1);
  expect(ok).toMatchObject({ traceparent, tracestate: 'loja=1' });
  const retentada = await posts(eventoId, '/uma-falha', 2);
  expect(retentada.map((r) => [r.status, r.traceparent])).toEqual([
    [500, traceparent],
    [204, traceparent],
  ]);
}, 60_000);

test('When a publisher sends no traceparent (or a broken one), then the gateway starts a trace and the subscriber gets it', async () => {
  for (const extra of [{} as Record<string, string>, { traceparent: `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01` }]) {
    const eventoId = await publicar(extra);
    const [ok] = await posts(eventoId, '/ok', 1);
    expect(ok!.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(ok!.traceparent).not.toContain('0'.repeat(32));
    const retentada = await posts(eventoId, '/uma-falha', 2);
    expect(retentada.map((r) => r.traceparent)).toEqual([ok!.traceparent, ok!.traceparent]);
  }
}, 60_000);
