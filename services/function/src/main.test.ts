import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { startAccessForTests, type TestAccess } from '@hub/access/src/testing';
import { withDatabase } from '@hub/database';
import { startTestIdentity, type TestIdentity, waitFor } from '@hub/testing';
import pg from 'pg';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const database = `fn_main_${process.pid}_${Date.now().toString(36)}`;
let identity: TestIdentity;
let access: TestAccess;
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
});

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await admin(`drop database if exists "${database}" with (force)`);
  await access?.close();
  await identity?.close();
});

test('When main starts, then it creates and migrates its database, serves, and on SIGTERM stops cleanly with exit code 0', async () => {
  const root = path.resolve(__dirname, '../../..');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...identity.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    FUNCTION_PORT: '0',
    FUNCTION_DATABASE_URL: withDatabase(ADMIN_URL, database),
    ACCESS_URL: access.url,
  };
  child = spawn(path.join(root, 'node_modules/.bin/tsx'), [path.join(__dirname, 'main.ts')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));

  const url = await waitFor(() => /"url":"(http:\/\/[^"]+)".*function listening/.exec(output)?.[1], { timeoutMs: 25_000, what: 'the service listening' });
  const ready = await fetch(`${url}/saude/prontidao`);
  expect(ready.status).toBe(200);
  const master = await access.masterToken();
  const created = await fetch(`${url}/funcao`, {
    method: 'POST',
    headers: { authorization: `Bearer ${master}`, 'content-type': 'application/json' },
    body: JSON.stringify({ nome: 'Processo real' }),
  });
  expect(created.status).toBe(201);

  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(output).toMatch(/"signal":"SIGTERM".*stopping/);
}, 40_000);
