import { createHubClient } from '@hub/client';
import { waitFor } from '@hub/testing';
import { api } from '../http-client';
import type { Platform } from '../platform';
import { montarPalco, type Palco } from './palco';
import type { Assinante } from './receptor';

/**
 * Scale-out (issue 10): two hub-api and two delivery-worker processes against one RabbitMQ and one
 * PostgreSQL, behind one gateway that spreads requests over both hub-apis. Both hub-apis accept
 * publications and both workers attempt deliveries, and no delivery is completed twice as state.
 * The replicas agree (issue 18): a write on one hub-api, or a worker's 410, reaches the other's
 * cached lookups at once (their life is ten minutes here, so only the notification explains it).
 */
let palco: Palco;
let platform: Platform;
let assinante: Assinante;
let db: Palco['db'];

beforeAll(async () => {
  palco = await montarPalco({ instancias: 2, env: { 'hub-api': { HUB_CACHE_TTL: '10m' } } });
  ({ platform, assinante, db } = palco);
}, 240_000);

afterAll(() => palco?.encerrar(), 60_000);

/** One counter of a process's /metrics (summed over its labels). */
async function contador(url: string, nome: string): Promise<number> {
  const texto = await (await fetch(`${url}/metrics`)).text();
  return texto
    .split('\n')
    .filter((l) => l.startsWith(`${nome}{`) || l.startsWith(`${nome} `))
    .reduce((soma, l) => soma + Number(l.split(' ').at(-1)), 0);
}

test('When two hub-apis and two workers run behind one gateway, then both hub-apis accept publications, both workers deliver, and every delivery is concluded once', async () => {
  expect(platform.enderecos('hub-api')).toHaveLength(2);
  expect(platform.enderecos('delivery-worker')).toHaveLength(2);
  const master = await platform.userToken('master.escala@empresa.com.br', { master: true });
  const gw = (method: string, path: string, body?: unknown) =>
    api<{ id: string }>(platform.gatewayUrl, master, method, path, body);
  const loja = await gw('POST', '/aplicativo', { nome: 'Loja da escala', client_id: 'loja-escala' });
  const erp = await gw('POST', '/aplicativo', { nome: 'ERP da escala', client_id: 'erp-escala' });
  const tipo = await gw('POST', '/tipo-de-evento', { nome: 'pedido.escala', aplicativo_id: loja.body.id });
  await gw('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.body.id, esquema: { type: 'object' } });
  for (const caminho of ['/a', '/b', '/c'])
    await gw('POST', '/assinatura', {
      aplicativo_assinante_id: erp.body.id,
      tipo_de_evento_id: tipo.body.id,
      versao_do_esquema: 1,
      url_de_destino: assinante.url(caminho),
    });

  const token = await platform.applicationToken('loja-escala');
  const cliente = createHubClient({ baseUrl: platform.gatewayUrl, token: () => token });
  const eventos = await Promise.all(
    Array.from({ length: 300 }, (_, i) =>
      cliente.publish({ tipo_de_evento_id: tipo.body.id, versao_do_esquema: 1, entidade_id: `p-${i}`, dados: { i } }),
    ),
  );
  const ids = eventos.flatMap((e) => e.entregas.map((en) => en.id));
  expect(ids).toHaveLength(900);
  await waitFor(
    async () =>
      Number(
        (
          await db.query<{ n: string }>(
            `select count(*) as n from entrega where id = any($1::uuid[]) and situacao = 'concluida'`,
            [ids],
          )
        ).rows[0]!.n,
      ) === ids.length,
    { timeoutMs: 60_000, intervalMs: 250, what: 'every delivery concluded' },
  );
  const duplas = await db.query(
    `select entrega_id from tentativa where entrega_id = any($1::uuid[]) and sucesso group by entrega_id having count(*) > 1`,
    [ids],
  );
  expect(duplas.rows).toEqual([]);

  const aceitosPorHubApi = await Promise.all(
    platform.enderecos('hub-api').map((url) => contador(url, 'hub_eventos_aceitos_total')),
  );
  expect(aceitosPorHubApi.reduce((a, b) => a + b, 0)).toBe(300);
  expect(aceitosPorHubApi.every((n) => n > 0)).toBe(true);
  const tentativasPorWorker = await Promise.all(
    platform.enderecos('delivery-worker').map((url) => contador(url, 'hub_delivery_attempts_total')),
  );
  expect(tentativasPorWorker.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(900);
  expect(tentativasPorWorker.every((n) => n > 0)).toBe(true);
  console.log(
    `scale-out: events accepted per hub-api ${aceitosPorHubApi.join(' / ')}, attempts per worker ${tentativasPorWorker.join(' / ')}`,
  );
}, 120_000);

/** How soon after a write the other replica must act on it (issue 18: replicas agree within 100 ms). */
const PRAZO_MS = 100;

/** A publisher, a subscriber and a type with version 1 made through the gateway; publishes on one hub-api process. */
async function registro(nome: string) {
  const master = await platform.userToken(`master.${nome}@empresa.com.br`, { master: true });
  const gw = (method: string, path: string, body?: unknown) =>
    api<{ id: string }>(platform.gatewayUrl, master, method, path, body);
  const loja = await gw('POST', '/aplicativo', { nome: `Loja ${nome}`, client_id: `loja-${nome}` });
  const erp = await gw('POST', '/aplicativo', { nome: `ERP ${nome}`, client_id: `erp-${nome}` });
  const tipo = await gw('POST', '/tipo-de-evento', { nome: `pedido.${nome}`, aplicativo_id: loja.body.id });
  await gw('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.body.id, esquema: { type: 'object' } });
  const token = await platform.applicationToken(`loja-${nome}`);
  return {
    master,
    assinar: async (caminho: string) =>
      (
        await gw('POST', '/assinatura', {
          aplicativo_assinante_id: erp.body.id,
          tipo_de_evento_id: tipo.body.id,
          versao_do_esquema: 1,
          url_de_destino: assinante.url(caminho),
        })
      ).body.id,
    /** Publishes on hub-api process `i` (not through the gateway); the event's deliveries to `assinatura`. */
    publicarEm: async (i: number, assinatura: string) => {
      const r = await api<{ id: string }>(platform.enderecos('hub-api')[i]!, token, 'POST', '/eventos', {
        tipo_de_evento_id: tipo.body.id,
        versao_do_esquema: 1,
        entidade_id: 'p-1',
        dados: {},
      });
      expect(r.status).toBe(201);
      const { rows } = await db.query<{ n: string }>(
        'select count(*) as n from entrega where evento_id = $1 and assinatura_id = $2',
        [r.body.id, assinatura],
      );
      return Number(rows[0]!.n);
    },
  };
}

test('When a subscription is switched off on one hub-api process, then an event published on the other right after gets no delivery to it', async () => {
  const r = await registro('replicas');
  const assinatura = await r.assinar('/replicas');
  // Both processes have the subscription in their caches.
  expect(await r.publicarEm(0, assinatura)).toBe(1);
  expect(await r.publicarEm(1, assinatura)).toBe(1);
  const [hub0] = platform.enderecos('hub-api');
  expect((await api(hub0!, r.master, 'PATCH', `/assinatura/${assinatura}`, { ativa: false })).status).toBe(200);
  await waitFor(async () => (await r.publicarEm(1, assinatura)) === 0, {
    timeoutMs: PRAZO_MS,
    intervalMs: 5,
    what: 'the other process to stop delivering to it',
  });
});

test('When the worker switches a subscription off on a 410, then the next publication on either hub-api process does not deliver to it', async () => {
  const r = await registro('gone');
  const assinatura = await r.assinar('/gone');
  // Both processes cache the subscription while it still answers; then it is gone.
  expect(await r.publicarEm(0, assinatura)).toBe(1);
  expect(await r.publicarEm(1, assinatura)).toBe(1);
  // Both delivered before it is gone: otherwise the first 410 switches it off and the claim cancels the other.
  await waitFor(() => assinante.de('/gone').length >= 2, { timeoutMs: 60_000, what: 'the two deliveries answered' });
  assinante.responder('/gone', 410);
  expect(await r.publicarEm(0, assinatura)).toBe(1);
  await waitFor(
    async () => (await db.query('select 1 from assinatura where id = $1 and not ativa', [assinatura])).rowCount === 1,
    { timeoutMs: 60_000, intervalMs: 20, what: 'the worker to switch the subscription off' },
  );
  await waitFor(async () => (await r.publicarEm(0, assinatura)) === 0 && (await r.publicarEm(1, assinatura)) === 0, {
    timeoutMs: PRAZO_MS,
    intervalMs: 5,
    what: 'both processes to stop delivering to it',
  });
  expect(assinante.de('/gone').length).toBeGreaterThanOrEqual(3);
}, 150_000);
