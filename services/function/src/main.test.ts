import path from 'node:path';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import {
  dropDatabase,
  type SpawnedService,
  spawnService,
  startTestIdentity,
  type TestIdentity,
  unusedTestDatabase,
} from '@hub/testing';

const database = unusedTestDatabase('fn_main');
let identity: TestIdentity;
let access: TestAccess;
let service: SpawnedService | undefined;

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
});

afterAll(async () => {
  await service?.kill();
  await dropDatabase(database.name);
  await access?.close();
  await identity?.close();
});

test('When main starts, then it creates and migrates its database, serves, and on SIGTERM stops cleanly with exit code 0', async () => {
  service = spawnService(path.join(__dirname, 'main.ts'), {
    ...identity.env,
    FUNCTION_PORT: '0',
    FUNCTION_DATABASE_URL: database.url,
    ACCESS_URL: access.url,
  });
  const url = await service.url('function');
  expect((await fetch(`${url}/saude/prontidao`)).status).toBe(200);
  const master = await access.masterToken();
  const created = await fetch(`${url}/funcao`, {
    method: 'POST',
    headers: { authorization: `Bearer ${master}`, 'content-type': 'application/json' },
    body: JSON.stringify({ nome: 'Processo real' }),
  });
  expect(created.status).toBe(201);

  expect(await service.stop()).toBe(0);
  expect(service.output()).toMatch(/"signal":"SIGTERM".*stopping/);
}, 40_000);
