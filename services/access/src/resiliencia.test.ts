import { randomUUID } from 'node:crypto';
import path from 'node:path';
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

test('When PostgreSQL is stopped, restarted fast, immediately or killed, then access answers 503 banco_indisponivel meanwhile, readiness follows, and it stays up', async () => {
  await ensaiarQuedasDoBanco({ postgres, service, url, escrever: criar });
}, 120_000);
