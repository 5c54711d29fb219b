import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { startAccessForTests, type TestAccess } from '@hub/access';
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

// function as its own process (HTTP, its consumer and its outbox relay) against a PostgreSQL server
// of this file's own, which the test stops, restarts and kills (never the shared one).
let postgres: PrivatePostgres;
let identity: TestIdentity;
let access: TestAccess;
let service: SpawnedService;
let url: string;
let master: string;

beforeAll(async () => {
  [postgres, identity] = await Promise.all([startPrivatePostgres(), startTestIdentity()]);
  access = await startAccessForTests(identity);
  service = spawnService(path.join(__dirname, 'main.ts'), {
    ...identity.env,
    FUNCTION_PORT: '0',
    FUNCTION_DATABASE_URL: withDatabase(postgres.url, 'fn_resiliencia'),
    ACCESS_URL: access.url,
    OUTBOX_POLL_INTERVAL: '200ms',
  });
  url = await service.url('function', 60_000);
  master = await access.masterToken();
}, 90_000);

afterAll(async () => {
  await service?.kill();
  await postgres?.close();
  await access?.close();
  await identity?.close();
});

/** POST /funcao: a write with its outbox row, which the relay then publishes. */
const criar = () =>
  fetch(`${url}/funcao`, {
    method: 'POST',
    headers: { authorization: `Bearer ${master}`, 'content-type': 'application/json' },
    body: JSON.stringify({ nome: `Processo ${randomUUID().slice(0, 8)}` }),
  });
const prontidao = async () => (await fetch(`${url}/saude/prontidao`)).status;
const situacao = () =>
  service.child.exitCode === null && service.child.signalCode === null ? 'vivo' : service.output();

test('When PostgreSQL is stopped, restarted fast, immediately or killed, then function answers 503 banco_indisponivel meanwhile, readiness follows, and it stays up', async () => {
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
