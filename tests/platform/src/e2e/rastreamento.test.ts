import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@hub/testing';
import { closeConnections, sendRaw } from '../http-client';
import { type Platform, startPlatform } from '../platform';
import { type Criar, registrarRastreamento } from './rastreamento.test-support';

/**
 * OpenTelemetry from the publisher to the subscriber (issue 21, docs/decisions/tracing.md): gateway, hub-api and the delivery worker export their spans over OTLP/HTTP
 * (JSON) to a receiver written here, and a subscriber written here records what it gets. One
 * publication with the publisher's traceparent goes to two subscriptions: one answers 204, the
 * other 500 once and then 204 (a retried delivery); a second publication brings no traceparent.
 */

interface Atributo {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}
interface SpanOtlp {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Atributo[];
  links?: { traceId: string; spanId: string }[];
}
interface Span extends SpanOtlp {
  servico: string;
}
const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

/** The OTLP/HTTP receiver: every span of every export, with its service's name. */
async function iniciarColetor() {
  const spans: Span[] = [];
  const server = http.createServer((req, res) => {
    const partes: Buffer[] = [];
    req.on('data', (p: Buffer) => partes.push(p));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      const corpo = JSON.parse(Buffer.concat(partes).toString('utf8')) as {
        resourceSpans?: { resource?: { attributes?: Atributo[] }; scopeSpans?: { spans?: SpanOtlp[] }[] }[];
      };
      for (const rs of corpo.resourceSpans ?? []) {
        const servico =
          rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '(sem nome)';
        for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ ...s, servico });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    fechar: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Recebida {
  caminho: string;
  /** The event's id, from the body. */
  eventoId: string;
  traceparent: string | undefined;
  webhookId: string;
  status: number;
}

/** The subscriber: /ok answers 204; /uma-falha answers 500 to a delivery's first POST, 204 after. */
async function iniciarAssinante() {
  const recebidas: Recebida[] = [];
  const server = http.createServer((req, res) => {
    const partes: Buffer[] = [];
    req.on('data', (p: Buffer) => partes.push(p));
    req.on('end', () => {
      const eventoId = (JSON.parse(Buffer.concat(partes).toString('utf8')) as { id: string }).id;
      const caminho = req.url ?? '/';
      const webhookId = String(req.headers['webhook-id']);
      const antes = recebidas.filter((r) => r.webhookId === webhookId).length;
      const status = caminho === '/uma-falha' && antes === 0 ? 500 : 204;
      const traceparent = req.headers.traceparent as string | undefined;
      recebidas.push({ caminho, eventoId, traceparent, webhookId, status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (caminho: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${caminho}`,
    recebidas,
    fechar: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let coletor: Awaited<ReturnType<typeof iniciarColetor>>;
let assinante: Awaited<ReturnType<typeof iniciarAssinante>>;
let platform: Platform;
let tipoId: string;
let publicador: string;

beforeAll(async () => {
  coletor = await iniciarColetor();
  assinante = await iniciarAssinante();
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: coletor.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  platform = await startPlatform({
    env: {
      gateway: otel,
      'hub-api': otel,
      'delivery-worker': { ...otel, DELIVERY_RETRY_DELAYS: '200ms' },
    },
  });
  const master = await platform.userToken('master.rastro@empresa.com.br', { master: true });
  const gw: Criar = async (path, body) => {
    const r = await apiJson(platform.gatewayUrl, master, path, body);
    if (r.status >= 300) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { id: string };
  };
  tipoId = await registrarRastreamento(
    gw,
    { loja: ['Loja do rastro', 'loja-rastro'], erp: ['ERP do rastro', 'erp-rastro'], tipo: 'pedido.rastreado' },
    ['/ok', '/uma-falha'].map((caminho) => assinante.url(caminho)),
  );
  publicador = await platform.applicationToken('loja-rastro');
}, 240_000);

afterAll(async () => {
  closeConnections();
  await platform?.stop();
  await assinante?.fechar();
  await coletor?.fechar();
}, 60_000);

async function apiJson(base: string, token: string, path: string, body: unknown, extra: Record<string, string> = {}) {
  const r = await sendRaw(base, {
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra },
    body: Buffer.from(JSON.stringify(body)),
  });
  return { status: r.status, body: JSON.parse(r.text || 'null') as unknown };
}

async function publicar(extra: Record<string, string> = {}) {
  const r = await apiJson(
    platform.gatewayUrl,
    publicador,
    '/eventos',
    { tipo_de_evento_id: tipoId, versao_do_esquema: 1, entidade_id: 'P-1', dados: { n: 1 } },
    extra,
  );
  expect(r.status).toBe(201);
  return r.body as { id: string };
}

/** The delivery of the event to a path: its id (the webhook-id), once a POST of it arrived. */
const entregaPara = (eventoId: string, caminho: string) =>
  waitFor(() => assinante.recebidas.find((r) => r.eventoId === eventoId && r.caminho === caminho)?.webhookId, {
    timeoutMs: 20_000,
    what: `a POST of ${eventoId} to ${caminho}`,
  });

const atributo = (s: Span, chave: string) => {
  const v = s.attributes?.find((a) => a.key === chave)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.boolValue);
};
const doTraco = (traceId: string) => coletor.spans.filter((s) => s.traceId === traceId);
const partesDo = (traceparent: string | undefined) => {
  const [, traceId, spanId, flags] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent ?? '') ?? [];
  return { traceId, spanId, flags };
};
/** The one span of the trace that fits, waited for (exports come every 100 ms). */
const umSpan = (traceId: string, what: string, fits: (s: Span) => boolean) =>
  waitFor(
    () => {
      const achados = doTraco(traceId).filter(fits);
      if (achados.length > 1) throw new Error(`${what}: ${achados.length} spans`);
      return achados[0];
    },
    { timeoutMs: 20_000, what },
  );

test("When a publisher sends a traceparent, then one trace goes from the gateway to the subscriber, whose traceparent is the worker's POST's", async () => {
  const traceId = randomBytes(16).toString('hex');
  const doPublicador = randomBytes(8).toString('hex');
  const evento = await publicar({ traceparent: `00-${traceId}-${doPublicador}-01` });
  const entrega = { id: await entregaPara(evento.id, '/ok') };
  const recebida = assinante.recebidas.find((r) => r.webhookId === entrega.id)!;
  expect(partesDo(recebida.traceparent).traceId).toBe(traceId);

  // gateway: its server span, child of the publisher's span
  const gateway = await umSpan(traceId, 'the gateway span', (s) => s.servico === 'gateway' && s.kind === KIND.SERVER);
  expect(gateway.parentSpanId).toBe(doPublicador);
  // hub-api: its server span, child of the gateway's; the publication below it (express spans between)
  const hubApi = await umSpan(traceId, 'the hub-api span', (s) => s.servico === 'hub-api' && s.kind === KIND.SERVER);
  const publicacao = await umSpan(traceId, 'the publication span', (s) => s.name === 'publicacao');
  expect(publicacao.servico).toBe('hub-api');
  expect(atributo(publicacao, 'hub.evento_id')).toBe(evento.id);
  const porId = new Map(doTraco(traceId).map((s) => [s.spanId, s]));
  const ancestrais = (s: Span): string[] => {
    const pai = s.parentSpanId ? porId.get(s.parentSpanId) : undefined;
    return pai ? [pai.spanId, ...ancestrais(pai)] : [];
  };
  // (the gateway's express route, when the request takes the long way, sits between the two)
  expect(ancestrais(hubApi)).toContain(gateway.spanId);
  expect(ancestrais(publicacao)).toContain(hubApi.spanId);
  // its transaction: the batch's span under the publication (it opened the batch), its SQL under it
  const lote = await umSpan(traceId, 'the batch span', (s) => s.name === 'publicacao.gravacao_em_grupo');
  expect(lote.parentSpanId).toBe(publicacao.spanId);
  await umSpan(
    traceId,
    'the statement of the batch',
    (s) => s.parentSpanId === lote.spanId && s.name.startsWith('pg.query:publicacao_gravar'),
  );

  // the job: a PRODUCER span per delivery, child of the publication, whose context the message carries
  const tentativa = await umSpan(
    traceId,
    'the attempt span',
    (s) => s.name === 'entrega.tentativa' && atributo(s, 'hub.entrega_id') === entrega.id,
  );
  expect(tentativa.servico).toBe('delivery-worker');
  expect(tentativa.kind).toBe(KIND.CONSUMER);
  expect(tentativa.links ?? []).toEqual([]);
  const publish = await umSpan(traceId, 'the publish span', (s) => s.spanId === tentativa.parentSpanId);
  expect(publish).toMatchObject({ servico: 'hub-api', kind: KIND.PRODUCER, parentSpanId: publicacao.spanId });
  expect(atributo(publish, 'messaging.message.id')).toBe(entrega.id);
  // the POST: the instrumentation's client span under the attempt, the very span the subscriber names
  const post = await umSpan(traceId, 'the POST span', (s) => s.spanId === partesDo(recebida.traceparent).spanId);
  expect(post).toMatchObject({ servico: 'delivery-worker', kind: KIND.CLIENT, parentSpanId: tentativa.spanId });
}, 60_000);

test('When a delivery fails once and is retried, then each attempt is a span of the same trace, the second linked to the first, and each POST carries its own traceparent', async () => {
  const traceId = randomBytes(16).toString('hex');
  const evento = await publicar({ traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });
  const entrega = { id: await entregaPara(evento.id, '/uma-falha') };
  const posts = await waitFor(
    () => {
      const desta = assinante.recebidas.filter((r) => r.webhookId === entrega.id);
      return desta.length >= 2 ? desta : undefined;
    },
    { timeoutMs: 20_000, what: 'two POSTs of the retried delivery' },
  );
  expect(posts.map((p) => p.status)).toEqual([500, 204]);
  const tentativas = await waitFor(
    () => {
      const achadas = doTraco(traceId).filter(
        (s) => s.name === 'entrega.tentativa' && atributo(s, 'hub.entrega_id') === entrega.id,
      );
      return achadas.length >= 2 ? achadas : undefined;
    },
    { timeoutMs: 20_000, what: 'two attempt spans' },
  );
  expect(tentativas).toHaveLength(2);
  const [primeira, segunda] = [...tentativas].sort(
    (a, b) => Number(atributo(a, 'hub.tentativa')) - Number(atributo(b, 'hub.tentativa')),
  ) as [Span, Span];
  expect([atributo(primeira, 'hub.tentativa'), atributo(segunda, 'hub.tentativa')]).toEqual([1, 2]);
  expect(atributo(primeira, 'http.response.status_code')).toBe(500);
  expect(atributo(segunda, 'http.response.status_code')).toBe(204);
  // two spans, not one endless one: siblings under the job's PRODUCER span, the second linked to the first
  expect(primeira.spanId).not.toBe(segunda.spanId);
  expect(segunda.parentSpanId).toBe(primeira.parentSpanId);
  expect(primeira.links ?? []).toEqual([]);
  expect(segunda.links).toEqual([expect.objectContaining({ traceId, spanId: primeira.spanId })]);
  // each POST the subscriber got names the client span under its own attempt
  for (const [post, tentativa] of [
    [posts[0]!, primeira],
    [posts[1]!, segunda],
  ] as const) {
    const { traceId: doPost, spanId } = partesDo(post.traceparent);
    expect(doPost).toBe(traceId);
    const cliente = await umSpan(traceId, 'a POST span', (s) => s.spanId === spanId);
    expect(cliente.parentSpanId).toBe(tentativa.spanId);
  }
}, 60_000);

test('When a publisher sends no traceparent, then the trace starts at the gateway and reaches the subscriber', async () => {
  const evento = await publicar();
  const entrega = { id: await entregaPara(evento.id, '/ok') };
  const recebida = assinante.recebidas.find((r) => r.webhookId === entrega.id)!;
  const { traceId } = partesDo(recebida.traceparent);
  expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  const gateway = await umSpan(traceId!, 'the gateway span', (s) => s.servico === 'gateway' && s.kind === KIND.SERVER);
  expect(gateway.parentSpanId ?? '').toBe('');
  await umSpan(
    traceId!,
    'the attempt span',
    (s) => s.name === 'entrega.tentativa' && atributo(s, 'hub.entrega_id') === entrega.id,
  );
}, 60_000);
