import { waitFor } from '@hub/testing';
import { Client } from 'pg';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { criarCenario } from '../eventos/linhas.test-support';

// The default admission of applications' requests (HUB_CONSULTAS_DE_APLICATIVOS_EM_ANDAMENTO, 200)
// is far above the connections of hub-api's pool: what holds the panel's connections is the pool.
let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
}, 60_000);
afterAll(() => encerrarContexto(ctx));

/** Sessions of the hub's database waiting for a lock (other than `propria`). */
async function esperandoTrava(cliente: Client): Promise<number> {
  const { rows } = await cliente.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
  );
  return rows[0]!.n;
}

/**
 * Twelve reads of `caminho` by the application while `tabela` is locked (here a lock; in production,
 * a count over millions of rows): each waits, holding its connection. Once four wait, `enquanto`
 * checks what must still answer; then they must still be waiting, and after the lock all get 200.
 */
async function comLeiturasPresas(
  tabela: string,
  caminho: string,
  token: string,
  enquanto: () => Promise<void>,
): Promise<void> {
  const trava = new Client({ connectionString: ctx.hub.databaseUrl });
  await trava.connect();
  const observador = new Client({ connectionString: ctx.hub.databaseUrl });
  await observador.connect();
  let leituras: Promise<number>[] = [];
  try {
    await trava.query('begin');
    await trava.query(`lock table ${tabela} in access exclusive mode`);
    leituras = Array.from({ length: 12 }, () =>
      ctx
        .api()
        .get(caminho)
        .set(auth(token))
        .then((r) => r.status),
    );
    await waitFor(async () => ((await esperandoTrava(observador)) >= 4 ? true : undefined), {
      what: `the application’s reads waiting on ${tabela}`,
    });
    await enquanto();
    // The reads were still waiting when the panel was answered.
    expect(await esperandoTrava(observador)).toBeGreaterThanOrEqual(4);
  } finally {
    await trava.query('rollback');
    await trava.end();
    await observador.end();
  }
  expect(await Promise.all(leituras)).toEqual(Array.from({ length: 12 }, () => 200));
}

async function tokenDoAssinante(c: Awaited<ReturnType<typeof criarCenario>>): Promise<string> {
  const aplicativo = await ctx.api().get(`/aplicativo/${c.assinanteId}`).set(auth(ctx.todas));
  return ctx.identity.appToken(aplicativo.body.client_id as string);
}

test('When an application’s reads of /entregas all wait on the database, then they hold connections of their own: readiness and the panel still answer', async () => {
  const c = await criarCenario(ctx);
  const token = await tokenDoAssinante(c);
  // The application is known (publication's cached lookup) before anything waits.
  expect((await ctx.api().get('/entregas').set(auth(token))).status).toBe(200);
  await comLeiturasPresas('entrega', '/entregas', token, async () => {
    expect((await ctx.api().get('/saude/prontidao')).status).toBe(200);
    expect((await ctx.api().get(`/tipo-de-evento/${c.tipoId}`).set(auth(ctx.todas))).status).toBe(200);
  });
}, 60_000);

test('When an application’s reads of its replays all wait on the database, then they hold connections of their own: the panel still answers', async () => {
  const c = await criarCenario(ctx);
  const token = await tokenDoAssinante(c);
  const caminho = `/assinaturas/${c.assinaturaId}/reproducoes`;
  expect((await ctx.api().get(caminho).set(auth(token))).status).toBe(200);
  await comLeiturasPresas('reproducao', caminho, token, async () => {
    expect((await ctx.api().get(`/tipo-de-evento/${c.tipoId}`).set(auth(ctx.todas))).status).toBe(200);
  });
}, 60_000);
