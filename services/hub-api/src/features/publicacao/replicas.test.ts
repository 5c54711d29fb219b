import { waitFor } from '@hub/testing';
import pg from 'pg';
import request from 'supertest';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { startHubApiForTests, type TestHubApi } from '../../hub-api.test-support';
import { assinar, type Cenario, cenario } from './cenario.test-support';

/**
 * Two replicas of hub-api (A is the context's hub, B another on the same database, each with its
 * caches, its pools and its LISTEN connection). The caches live ten minutes here: only the
 * announcement of a write can explain that B sees it.
 */
const VIDA_LONGA = { HUB_CACHE_TTL: '10m' };
/** How soon after A answers a write B must act on it (the goal of issue 18: replicas agree within 100 ms). */
const PRAZO_MS = 100;

let ctx: Contexto;
let b: TestHubApi;
let sql: pg.Client;
beforeAll(async () => {
  ctx = await iniciarContexto({ env: VIDA_LONGA });
  b = await startHubApiForTests(ctx.identity, ctx.access, { env: VIDA_LONGA, databaseUrl: ctx.hub.databaseUrl });
  sql = new pg.Client({ connectionString: ctx.hub.databaseUrl });
  await sql.connect();
}, 120_000);
afterAll(async () => {
  await sql?.end();
  await b?.close();
  await encerrarContexto(ctx);
});

async function patchEmA(path: string, body: Record<string, unknown>) {
  const response = await ctx.api().patch(path).set(auth(ctx.todas)).send(body);
  expect(response.status).toBe(200);
}

const publicarEmB = (c: Cenario) => request(b.url).post('/eventos').set(auth(c.tokenDoDono)).send(c.corpo());

/** Deliveries of the event to the subscription, in the database. */
async function entregasPara(assinaturaId: string, response: request.Response): Promise<number> {
  expect(response.status).toBe(201);
  return ctx.hub.db.entrega.count({ where: { eventoId: response.body.id, assinaturaId } });
}

/** Publishes on B until `aceita` holds for its answer, for PRAZO_MS after the write (each try a real publication). */
const emB = (c: Cenario, aceita: (r: request.Response) => Promise<boolean> | boolean, what: string) =>
  waitFor(async () => aceita(await publicarEmB(c)), { timeoutMs: PRAZO_MS, intervalMs: 5, what });

/** A scenario with one subscription whose lookups B has cached by publishing once. */
async function emCacheEmB() {
  const c = await cenario(ctx);
  const assinatura = await assinar(ctx, c.tipo.id);
  expect(await entregasPara(assinatura.id, await publicarEmB(c))).toBe(1);
  return { c, assinatura };
}

describe('replicas agree: a write anywhere drops every replica’s cached lookups', () => {
  test('When a subscription is switched off on replica A, then an event published on B right after gets no delivery to it', async () => {
    const { c, assinatura } = await emCacheEmB();
    await patchEmA(`/assinatura/${assinatura.id}`, { ativa: false });
    await emB(c, async (r) => (await entregasPara(assinatura.id, r)) === 0, 'B to stop delivering to it');
    await patchEmA(`/assinatura/${assinatura.id}`, { ativa: true });
    await emB(c, async (r) => (await entregasPara(assinatura.id, r)) === 1, 'B to deliver to it again');
  });

  test('When a subscription’s filter is changed on replica A, then an event published on B right after follows the new filter', async () => {
    const { c, assinatura } = await emCacheEmB();
    // c.corpo() publishes dados { numero: 'A-1', valor: 10 }.
    await patchEmA(`/assinatura/${assinatura.id}`, { filtro: { 'dados.numero': 'B-2' } });
    await emB(c, async (r) => (await entregasPara(assinatura.id, r)) === 0, 'B to apply the new filter');
    await patchEmA(`/assinatura/${assinatura.id}`, { filtro: { 'dados.valor': { $lte: 10 } } });
    await emB(c, async (r) => (await entregasPara(assinatura.id, r)) === 1, 'B to apply the filter that matches');
  });

  test('When an event type is switched off on replica A, then B refuses its publications', async () => {
    const { c } = await emCacheEmB();
    await patchEmA(`/tipo-de-evento/${c.tipo.id}`, { ativo: false });
    await emB(c, (r) => r.status === 409 && r.body.codigo === 'tipo_de_evento_inativo', 'B to refuse the type');
  });

  test('When a schema version is switched off on replica A, then B refuses its publications', async () => {
    const { c } = await emCacheEmB();
    const versoes = await ctx
      .api()
      .get('/versao-de-esquema/filtro')
      .query({ tipo_de_evento_id: c.tipo.id })
      .set(auth(ctx.todas));
    await patchEmA(`/versao-de-esquema/${versoes.body[0].id}`, { ativa: false });
    await emB(c, (r) => r.status === 409 && r.body.codigo === 'versao_desativada', 'B to refuse the version');
  });

  test('When the publishing application is deactivated on replica A, then B refuses its token', async () => {
    const { c } = await emCacheEmB();
    await patchEmA(`/aplicativo/${c.dono.id}`, { ativo: false });
    await emB(c, (r) => r.status === 403, 'B to refuse the application');
  });

  test('When a subscription is switched off by another writer in plain SQL (as the delivery worker does on a 410), then B no longer delivers to it', async () => {
    const { c, assinatura } = await emCacheEmB();
    await sql.query('update assinatura set ativa = false, atualizado_em = now() where id = $1', [assinatura.id]);
    await emB(c, async (r) => (await entregasPara(assinatura.id, r)) === 0, 'B to stop delivering to it');
  });
});

describe('the LISTEN connection', () => {
  test('When its connection is terminated, then it reconnects, drops the caches (a change made meanwhile is seen) and goes on hearing writes', async () => {
    const { c, assinatura } = await emCacheEmB();
    const pid = b.avisos.backendPid;
    expect(pid).toEqual(expect.any(Number));
    // The switch-off commits after the listener's backend is gone: its notification is never heard.
    await sql.query('begin');
    await sql.query('update assinatura set ativa = false, atualizado_em = now() where id = $1', [assinatura.id]);
    expect((await sql.query('select pg_terminate_backend($1, 10000) as ok', [pid])).rows[0].ok).toBe(true);
    await sql.query('commit');

    await waitFor(() => b.avisos.listening && b.avisos.backendPid !== pid, { what: 'the listener to reconnect' });
    expect(await entregasPara(assinatura.id, await publicarEmB(c))).toBe(0);
    await patchEmA(`/assinatura/${assinatura.id}`, { ativa: true });
    await emB(c, async (r) => (await entregasPara(assinatura.id, r)) === 1, 'B to deliver to it again');
  });
});
