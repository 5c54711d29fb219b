import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { ESPERA_PRISMA_MS, withDatabase } from '@hub/database';
import {
  type PrivatePostgres,
  type SpawnedService,
  spawnService,
  startPrivatePostgres,
  startTcpProxy,
  type TcpProxy,
  startTestIdentity,
  type TestIdentity,
  waitFor,
} from '@hub/testing';
import request from 'supertest';
import { assinar, type Cenario, cenario, publicar } from './features/publicacao/cenario.test-support';
import type { Contexto } from './contexto.test-support';

// hub-api as its own process against a PostgreSQL server of this file's own, which the tests stop,
// restart and kill (never the shared one), and through a proxy to RabbitMQ that they cut.
let postgres: PrivatePostgres;
let rabbitmq: TcpProxy;
let identity: TestIdentity;
let access: TestAccess;
let keysDir: string;
let hub: SpawnedService;
let ctx: Contexto;
let c: Cenario;

beforeAll(async () => {
  [postgres, identity] = await Promise.all([startPrivatePostgres(), startTestIdentity()]);
  const broker = new URL(process.env.RABBITMQ_URL!);
  rabbitmq = await startTcpProxy({ host: broker.hostname, port: Number(broker.port || 5672) });
  broker.host = `${rabbitmq.host}:${rabbitmq.port}`;
  access = await startAccessForTests(identity);
  keysDir = await mkdtemp(path.join(tmpdir(), 'hub-resiliencia-'));
  hub = spawnService(path.join(__dirname, 'main.ts'), {
    ...identity.env,
    HUB_API_PORT: '0',
    HUB_DATABASE_URL: withDatabase(postgres.url, 'hub_resiliencia'),
    ACCESS_URL: access.url,
    HUB_SIGNING_KEYS_FILE: path.join(keysDir, 'signing-keys.json'),
    HUB_SIGNING_KEYS: undefined,
    OUTBOX_POLL_INTERVAL: '200ms',
    RABBITMQ_URL: broker.toString(),
  });
  const url = await hub.url('hub-api', 60_000);
  const todas = await access.userWith(`resiliencia@${access.companyDomain}`, {
    monitoramento: { ler: true, criar: true, editar: true, deletar: true },
  });
  ctx = { identity, access, api: () => request(url), todas } as unknown as Contexto;
  c = await cenario(ctx);
}, 120_000);

afterAll(async () => {
  await hub?.kill();
  await postgres?.close();
  await rabbitmq?.close();
  await access?.close();
  await identity?.close();
  await rm(keysDir, { recursive: true, force: true });
});

const vivo = () => hub.child.exitCode === null && hub.child.signalCode === null;
/** Alive, or why not (its last output). */
const situacao = () => (vivo() ? 'vivo' : hub.output().slice(-3_000));
const prontidao = () => ctx.api().get('/saude/prontidao');

async function aceitaDeNovo() {
  return waitFor(
    async () => {
      const response = await publicar(ctx, c.tokenDoDono, c.corpo());
      return response.status === 201 ? response : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: 'a publication to be accepted again' },
  );
}

async function esperaBancoIndisponivel(resposta: request.Response) {
  expect({ status: resposta.status, codigo: resposta.body.codigo }).toEqual({
    status: 503,
    codigo: 'banco_indisponivel',
  });
  expect(resposta.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(Number(resposta.headers['retry-after'])).toBeGreaterThan(0);
}

describe('hub-api when PostgreSQL goes away', () => {
  test('When PostgreSQL is stopped, then publications and other routes answer 503 banco_indisponivel with Retry-After and readiness 503; after it is back, 201 and 200, the same process', async () => {
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).status).toBe(201);
    const antes = await postgresCount();

    await postgres.stop('fast');
    await esperaBancoIndisponivel(await publicar(ctx, c.tokenDoDono, c.corpo()));
    await esperaBancoIndisponivel(
      await ctx
        .api()
        .post('/evento')
        .set({ authorization: `Bearer ${ctx.todas}` })
        .send(c.corpo()),
    );
    await esperaBancoIndisponivel(
      await ctx
        .api()
        .get(`/tipo-de-evento/${c.tipo.id}`)
        .set({ authorization: `Bearer ${ctx.todas}` }),
    );
    const fora = await prontidao();
    expect(fora.status).toBe(503);
    expect(fora.body.dependencias.postgresql).toMatch(/^falha/);
    // The metrics still answer (the outbox lag keeps its last value).
    expect((await ctx.api().get('/metrics')).status).toBe(200);

    await postgres.start();
    await aceitaDeNovo();
    await waitFor(async () => (await prontidao()).status === 200, { timeoutMs: 30_000, what: 'readiness 200' });
    // Nothing of the refused publications was written: only the one before and the one after.
    expect((await postgresCount()) - antes).toBe(1);
    expect(situacao()).toBe('vivo');
  }, 90_000);

  test('When PostgreSQL restarts fast (57P01) or crashes (immediate, SIGKILL) under publications, then hub-api stays up and accepts again', async () => {
    for (const modo of ['fast', 'immediate', 'kill'] as const) {
      const carga = Array.from({ length: 20 }, () => publicar(ctx, c.tokenDoDono, c.corpo()));
      await postgres.restart(modo);
      for (const resposta of await Promise.all(carga)) expect([201, 503]).toContain(resposta.status);
      await aceitaDeNovo();
      expect({ modo, situacao: situacao() }).toEqual({ modo, situacao: 'vivo' });
    }
    expect(hub.output()).not.toMatch(/Unhandled 'error' event|uncaughtException/);
  }, 120_000);

  test('When PostgreSQL hangs (its processes stopped, connections left open) under publications, then each is answered 201 or 503 banco_indisponivel within the statement timeout, none held; once it resumes, each keyed one sent again is accepted, and every accepted one is in evento once', async () => {
    // The registry's lookups go through Prisma, which has no statement timeout: they are cached for
    // HUB_CACHE_TTL (5 s) from a fresh load, so the publications below, sent at once, go straight to
    // SqlPool's statements: the group write (10 without a key, first) and the key's lookup (10 with
    // one). A registry write drops the caches (here, and by its NOTIFY a moment later); the next
    // publication loads them again.
    await assinar(ctx, c.tipo.id);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await aceitaDeNovo();
    const chaves = Array.from({ length: 10 }, (_, i) => `parado-${Date.now()}-${i}`);
    const comChave = (chave: string) => publicar(ctx, c.tokenDoDono, c.corpo(), { 'Idempotency-Key': chave });
    postgres.congelar();
    let respostas: request.Response[] | 'sem resposta';
    const lentidao: number[] = [];
    let limite: NodeJS.Timeout | undefined;
    try {
      const semChave = Array.from({ length: 10 }, () => publicar(ctx, c.tokenDoDono, c.corpo()));
      // A statement fails after SqlPool's ESPERA_MAXIMA_MS (10 s) unanswered, a wait for one of its
      // connections after CONEXAO's 10 s; a publication whose group write waited for a slot behind
      // hung statements, after twice that (about 20 s here). A registry lookup whose cache entry ran
      // out meanwhile goes through Prisma, after ESPERA_PRISMA_MS (30 s): the bound, with room for
      // a machine that CI's other fault suites load (28 s was once too little there).
      const inicio = Date.now();
      const todas = [...semChave, ...chaves.map(comChave)].map((p) =>
        Promise.resolve(p).finally(() => lentidao.push(Date.now() - inicio)),
      );
      respostas = await Promise.race([
        Promise.all(todas),
        new Promise<'sem resposta'>((resolve) => {
          limite = setTimeout(() => resolve('sem resposta'), ESPERA_PRISMA_MS + 10_000);
        }),
      ]);
    } finally {
      clearTimeout(limite);
      postgres.descongelar();
    }
    console.log(`PostgreSQL hung: ${lentidao.length} of 20 answered, the slowest after ${Math.max(...lentidao)} ms`);
    expect(respostas === 'sem resposta' ? respostas : 'respondidas').toBe('respondidas');
    if (respostas === 'sem resposta') return;
    const vistas = respostas.map((r) => (r.status === 201 ? 'ok' : `${r.status} ${r.body.codigo}`));
    expect(vistas.filter((v) => v !== 'ok' && v !== '503 banco_indisponivel')).toEqual([]);

    // As a publisher does: each refused keyed one again, with its key, until accepted. One whose
    // statement committed once the server resumed is answered with that event, not written twice.
    const finais = await Promise.all(
      respostas.slice(10).map((r, i) =>
        r.status === 201
          ? r
          : waitFor(
              async () => {
                const outra = await comChave(chaves[i]!);
                return outra.status < 300 ? outra : undefined;
              },
              { timeoutMs: 30_000, intervalMs: 200, what: 'a refused publication accepted again' },
            ),
      ),
    );
    const comChaveIds = finais.map((r) => r.body.id as string);
    expect(new Set(comChaveIds).size).toBe(10);
    expect(
      await consultar(
        'select count(*) from evento e join chave_de_idempotencia k on k.evento_id = e.id where k.chave = any($1::text[]) and e.id = any($2::uuid[])',
        [chaves, comChaveIds],
      ),
    ).toBe(10);
    const aceitosSemChave = respostas
      .slice(0, 10)
      .filter((r) => r.status === 201)
      .map((r) => r.body.id as string);
    expect(await consultar('select count(*) from evento where id = any($1::uuid[])', [aceitosSemChave])).toBe(
      aceitosSemChave.length,
    );
    expect(situacao()).toBe('vivo');
  }, 120_000);
});

describe('hub-api when RabbitMQ goes away', () => {
  test('When RabbitMQ is unreachable, then readiness is 503 naming it, /metrics answers and GET /fila is 503 broker_indisponivel, while publications are still accepted; once it is back, readiness is 200 and what was accepted is relayed, the same process', async () => {
    await assinar(ctx, c.tipo.id);
    await rabbitmq.cut();
    const fora = await waitFor(
      async () => {
        const resposta = await prontidao();
        return resposta.status === 503 ? resposta : undefined;
      },
      { timeoutMs: 15_000, what: 'readiness 503' },
    );
    expect(fora.body.dependencias.rabbitmq).toMatch(/^falha/);
    expect(fora.body.dependencias.postgresql).toBe('ok');
    // The queues' depths cannot be read: /metrics answers without them, GET /fila is a 503 to retry.
    const metricas = await ctx.api().get('/metrics');
    expect(metricas.status).toBe(200);
    expect(metricas.text).not.toContain('hub_fila_mensagens{');
    const filas = await ctx
      .api()
      .get('/fila')
      .set({ authorization: `Bearer ${ctx.todas}` });
    expect([filas.status, filas.body.codigo, filas.headers['retry-after']]).toEqual([503, 'broker_indisponivel', '5']);
    // The outbox keeps its jobs (they could not be published): nothing of a publication needs the
    // broker on the request path.
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).status).toBe(201);
    await waitFor(async () => (await pendentesNaOutbox()) > 0, { what: 'the jobs in the outbox' });

    await rabbitmq.resume();
    await waitFor(async () => (await prontidao()).status === 200, { timeoutMs: 60_000, what: 'readiness 200' });
    await waitFor(async () => (await pendentesNaOutbox()) === 0, { timeoutMs: 30_000, what: 'the outbox relayed' });
    expect(situacao()).toBe('vivo');
  }, 90_000);
});

async function pendentesNaOutbox(): Promise<number> {
  return consultar('select count(*) from outbox where publicado_em is null');
}

async function postgresCount(): Promise<number> {
  return consultar('select count(*) from evento');
}

async function consultar(texto: string, valores: unknown[] = []): Promise<number> {
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: withDatabase(postgres.url, 'hub_resiliencia') });
  await client.connect();
  try {
    return Number((await client.query(texto, valores)).rows[0].count);
  } finally {
    await client.end();
  }
}
