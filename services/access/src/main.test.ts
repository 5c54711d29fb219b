import path from 'node:path';
import {
  dropDatabase,
  type SpawnedService,
  spawnService,
  startTestIdentity,
  type TestIdentity,
  unusedTestDatabase,
  waitFor,
} from '@hub/testing';

const database = unusedTestDatabase('acc_main');
let identity: TestIdentity;
let service: SpawnedService | undefined;

beforeAll(async () => {
  identity = await startTestIdentity();
});

afterAll(async () => {
  service?.child.kill('SIGKILL');
  await dropDatabase(database.name);
  await identity?.close();
});

test('When main starts, then it creates and migrates its database, is alive and ready, serves, and on SIGTERM exits 0', async () => {
  service = spawnService(path.join(__dirname, 'main.ts'), {
    ...identity.env,
    ACCESS_PORT: '0',
    ACCESS_DATABASE_URL: database.url,
  });
  const url = await service.url('access');
  expect((await fetch(`${url}/saude`)).status).toBe(200);
  await waitFor(async () => (await fetch(`${url}/saude/prontidao`)).status === 200, {
    timeoutMs: 15_000,
    what: 'readiness',
  });
  const token = await identity.userToken({ email: 'processo@empresa.com.br', master: true });
  const acesso = await fetch(`${url}/auth/acesso`, { headers: { authorization: `Bearer ${token}` } });
  expect(acesso.status).toBe(200);
  expect(((await acesso.json()) as { perfil: string }).perfil).toBe('master');

  const code = await service.stop();
  expect({ code, output: code === 0 ? '' : service.output() }).toEqual({ code: 0, output: '' });
  expect(service.output()).toMatch(/"signal":"SIGTERM".*stopping/);
}, 40_000);
