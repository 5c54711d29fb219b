import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { withDatabase } from '@hub/database';
import {
  type PrivatePostgres,
  type SpawnedService,
  spawnService,
  startPrivatePostgres,
  startTestIdentity,
  type TestIdentity,
  waitFor,
} from '@hub/testing';

// access as its own process against a PostgreSQL server of this file's own, which the test stops,
// restarts and kills (never the shared one).
let postgres: PrivatePostgres;
let identity: TestIdentity;
let service: SpawnedService;
let url: string;
let master: string;

beforeAll(async () => {
  [postgres, identity] = await Promise.all([startPrivatePostgres(), startTestIdentity()]);
  service = spawnService(path.join(__dirname, 'main.ts'), {
    ...identity.env,
    ACCESS_PORT: '0',
    ACCESS_DATABASE_URL: withDatabase(postgres.url, 'acc_resiliencia'),
  });
  url = await service.url('access', 60_000);
  master = await identity.userToken({ email: 'resiliencia@empresa.com.br', master: true });
}, 90_000);

afterAll(async () => {
  await service?.kill();
  await postgres?.close();
  await identity?.close();
});

/** POST /auth: a write that takes the e-mail's advisory lock in its transaction. */
const criar = () =>
  fetch(`${url}/auth`, {
    method: 'POST',
    headers: { authorization: `Bearer ${master}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: `a.${randomUUID().slice(0, 8)}@empresa.com.br`, perfil: 'colaborador' }),
  });
const prontidao = async () => (await fetch(`${url}/saude/prontidao`)).status;
const situacao = () =>
  service.child.exitCode === null && service.child.signalCode === null ? 'vivo' : service.output();

test('When PostgreSQL is stopped, restarted fast, immediately or killed, then access answers 503 banco_indisponivel meanwhile, readiness follows, and it stays up', async () => {
  expect((await criar()).status).toBe(201);

  await postgres.stop('fast');
  const fora = await criar();
  expect({ status: fora.status, codigo: ((await fora.json()) as { codigo: string }).codigo }).toEqual({
    status: 503,
    codigo: 'banco_indisponivel',
  });
  expect(Number(fora.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await prontidao()).toBe(503);
  await postgres.start();
  await waitFor(async () => (await criar()).status === 201, { timeoutMs: 30_000, what: 'a write accepted again' });
  await waitFor(async () => (await prontidao()) === 200, { timeoutMs: 30_000, what: 'readiness 200' });

  for (const modo of ['fast', 'immediate', 'kill'] as const) {
    const carga = Array.from({ length: 10 }, () => criar());
    await postgres.restart(modo);
    for (const resposta of await Promise.all(carga)) expect([201, 503]).toContain(resposta.status);
    await waitFor(async () => (await criar()).status === 201, { timeoutMs: 30_000, what: `accepted after ${modo}` });
    expect({ modo, situacao: situacao() }).toEqual({ modo, situacao: 'vivo' });
  }
}, 120_000);
