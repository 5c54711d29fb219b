import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import {
  dropDatabase,
  type SpawnedService,
  spawnService,
  startTestIdentity,
  type TestIdentity,
  unusedTestDatabase,
  waitFor,
} from '@hub/testing';

const database = unusedTestDatabase('hub_main');
let identity: TestIdentity;
let access: TestAccess;
let keysDir: string;
let service: SpawnedService | undefined;

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  keysDir = await mkdtemp(path.join(tmpdir(), 'hub-main-'));
});

afterAll(async () => {
  await service?.kill();
  await dropDatabase(database.name);
  await rm(keysDir, { recursive: true, force: true });
  await access?.close();
  await identity?.close();
});

test('When main starts, then it creates and migrates its database, creates a key file, serves, and on SIGTERM exits 0', async () => {
  const keysFile = path.join(keysDir, 'hub', 'signing-keys.json');
  service = spawnService(path.join(__dirname, 'main.ts'), {
    ...identity.env,
    HUB_API_PORT: '0',
    HUB_DATABASE_URL: database.url,
    ACCESS_URL: access.url,
    HUB_SIGNING_KEYS_FILE: keysFile,
    HUB_SIGNING_KEYS: undefined,
  });
  const url = await service.url('hub-api');
  await waitFor(async () => (await fetch(`${url}/saude/prontidao`)).status === 200, {
    timeoutMs: 15_000,
    what: 'readiness',
  });
  expect(((await (await fetch(`${url}/.well-known/jwks.json`)).json()) as { keys: unknown[] }).keys).toHaveLength(1);
  expect((await stat(keysFile)).mode & 0o777).toBe(0o600);
  const token = await access.masterToken();
  const lista = await fetch(`${url}/tipo-de-evento/filtro?nome=colaborador.atualizado`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(((await lista.json()) as { nome: string }[]).map((t) => t.nome)).toEqual(['colaborador.atualizado']);
  expect(service.output()).not.toContain('"d":');

  const code = await service.stop();
  expect({ code, output: code === 0 ? '' : service.output() }).toEqual({ code: 0, output: '' });
  expect(service.output()).toMatch(/"signal":"SIGTERM".*stopping/);
}, 40_000);

test('When HUB_AMBIENTE is SANDBOX and RABBITMQ_URL is not set, then main exits 1 naming RABBITMQ_URL and touches nothing', async () => {
  const keysFile = path.join(keysDir, 'sandbox', 'signing-keys.json');
  const sandbox = spawnService(path.join(__dirname, 'main.ts'), {
    ...identity.env,
    HUB_AMBIENTE: 'SANDBOX',
    RABBITMQ_URL: undefined,
    HUB_API_PORT: '0',
    HUB_DATABASE_URL: database.url,
    ACCESS_URL: access.url,
    HUB_SIGNING_KEYS_FILE: keysFile,
    HUB_SIGNING_KEYS: undefined,
  });
  const code = await new Promise<number | null>((resolve) => sandbox.child.once('exit', resolve));
  expect(code).toBe(1);
  expect(sandbox.output()).toMatch(/RABBITMQ_URL: required when HUB_AMBIENTE is SANDBOX/);
  await expect(stat(keysFile)).rejects.toThrow(/ENOENT/);
}, 30_000);
