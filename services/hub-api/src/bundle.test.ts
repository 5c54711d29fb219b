import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { dropDatabase, startTestIdentity, type TestIdentity, unusedTestDatabase, waitFor } from '@hub/testing';

// Production runs the esbuild bundle with plain node (infra/scripts/build.mjs). What a bundle can
// lose: the SQL migrations found through __dirname, Prisma's WebAssembly query compiler, the ESM
// of jose and postgrator. hub-api uses all of them.
const ROOT = path.resolve(__dirname, '../../..');
const database = unusedTestDatabase('hub_bundle');
let identity: TestIdentity;
let access: TestAccess;
let dir: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  // Somewhere else than dist/, so that a `pnpm start` of this checkout is not disturbed.
  dir = await mkdtemp(path.join(tmpdir(), 'hub-bundle-'));
  await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'infra/scripts/build.mjs'), '--outdir', dir, 'hub-api'],
    {
      cwd: ROOT,
    },
  );
}, 90_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await dropDatabase(database.name);
  await rm(dir, { recursive: true, force: true });
  await access?.close();
  await identity?.close();
});

test('When hub-api runs from its bundle with plain node, then it migrates, queries through Prisma, serves and exits 0 on SIGTERM', async () => {
  const bundle = spawn(process.execPath, [path.join(dir, 'main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...identity.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      HUB_API_PORT: '0',
      HUB_DATABASE_URL: database.url,
      ACCESS_URL: access.url,
      HUB_SIGNING_KEYS_FILE: path.join(dir, 'keys', 'signing-keys.json'),
      HUB_SIGNING_KEYS: undefined,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = bundle;
  let output = '';
  bundle.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  bundle.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => bundle.once('exit', resolve));

  const url = await waitFor(() => /"url":"(http:\/\/[^"]+)".*hub-api listening/.exec(output)?.[1], {
    timeoutMs: 30_000,
    what: 'hub-api listening',
  });
  expect(output).toMatch(/migrations applied/);
  expect((await fetch(`${url}/saude/prontidao`)).status).toBe(200);
  const token = await access.masterToken();
  const tipos = await fetch(`${url}/tipo-de-evento/filtro?nome=colaborador.atualizado`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(((await tipos.json()) as { nome: string }[]).map((t) => t.nome)).toEqual(['colaborador.atualizado']);

  bundle.kill('SIGTERM');
  const code = await exited;
  expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });
}, 60_000);
