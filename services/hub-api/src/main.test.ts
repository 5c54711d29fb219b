import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAccessForTests, type TestAccess } from '@hub/access/src/testing';
import { withDatabase } from '@hub/database';
import { startTestIdentity, type TestIdentity, waitFor } from '@hub/testing';
import pg from 'pg';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const database = `hub_main_${process.pid}_${Date.now().toString(36)}`;
let identity: TestIdentity;
let access: TestAccess;
let keysDir: string;
let child: ChildProcess | undefined;

async function admin(sql: string) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  keysDir = await mkdtemp(path.join(tmpdir(), 'hub-main-'));
});

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await admin(`drop database if exists "${database}" with (force)`);
  await rm(keysDir, { recursive: true, force: true });
  await access?.close();
  await identity?.close();
});

test('When main starts, then it creates and migrates its database, creates a key file, serves, and on SIGTERM exits 0', async () => {
  const root = path.resolve(__dirname, '../../..');
  const keysFile = path.join(keysDir, 'hub', 'signing-keys.json');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...identity.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    HUB_API_PORT: '0',
    HUB_DATABASE_URL: withDatabase(ADMIN_URL, database),
    ACCESS_URL: access.url,
    HUB_SIGNING_KEYS_FILE: keysFile,
  };
  delete env.HUB_SIGNING_KEYS;
  // One process (node with the tsx loader), so SIGTERM reaches main itself and is not relayed.
  child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'main.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));

  const url = await waitFor(() => /"url":"(http:\/\/[^"]+)".*hub-api listening/.exec(output)?.[1], { timeoutMs: 25_000, what: 'the service listening' });
  await waitFor(async () => (await fetch(`${url}/saude/prontidao`)).status === 200, { timeoutMs: 15_000, what: 'readiness' });
  expect(((await (await fetch(`${url}/.well-known/jwks.json`)).json()) as { keys: unknown[] }).keys).toHaveLength(1);
  expect((await stat(keysFile)).mode & 0o777).toBe(0o600);
  const token = await access.masterToken();
  const lista = await fetch(`${url}/tipo-de-evento/filtro?nome=colaborador.atualizado`, { headers: { authorization: `Bearer ${token}` } });
  expect(((await lista.json()) as { nome: string }[]).map((t) => t.nome)).toEqual(['colaborador.atualizado']);
  expect(output).not.toContain('"d":');

  child.kill('SIGTERM');
  const code = await exited;
  expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });
  expect(output).toMatch(/"signal":"SIGTERM".*stopping/);
}, 40_000);
