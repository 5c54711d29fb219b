import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { withDatabase } from '@hub/database';
import {
  type PrivatePostgres,
  type SpawnedService,
  spawnService,
  startPrivatePostgres,
  ensaiarQuedasDoBanco,
  startTestIdentity,
  type TestIdentity,
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

test('When PostgreSQL is stopped, restarted fast, immediately or killed, then function answers 503 banco_indisponivel meanwhile, readiness follows, and it stays up', async () => {
  await ensaiarQuedasDoBanco({ postgres, service, url, escrever: criar });
}, 120_000);
