import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { dropDatabase, startTestIdentity, type TestIdentity, unusedTestDatabase, waitFor } from '@hub/testing';

// Production runs the esbuild bundle with plain node (infra/scripts/build.mjs). What a bundle can
// lose: the SQL migrations found through __dirname, Prisma's WebAssembly query compiler, the ESM
// of jose and postgrator. hub-api uses all of them. And OpenTelemetry's patching of express and pg,
// which must be required from outside the bundle to be seen (docs/decisions/tracing.md).
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

/** A GET over a Unix socket: its status. */
function statusNoSocket(socketPath: string, caminho: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    http
      .get({ socketPath, path: caminho, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
      .on('error', reject);
  });
}

/** Runs the bundle with plain node; resolves once it listens. */
async function iniciarBundle(env: NodeJS.ProcessEnv = {}) {
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
      ...env,
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
  return { bundle, url, exited, output: () => output };
}

test('When hub-api runs from its bundle with plain node, then it migrates, queries through Prisma, serves on its port and its socket, and exits 0 on SIGTERM, removing the socket', async () => {
  const socket = path.join(dir, 'hub-api.sock');
  const { bundle, url, exited, output: saida } = await iniciarBundle({ HUB_API_SOCKET: socket });
  const output = saida();
  expect(output).toMatch(/migrations applied/);
  expect(output).toContain(`"socket":${JSON.stringify(socket)}`);
  expect((await fetch(`${url}/saude/prontidao`)).status).toBe(200);
  expect(await statusNoSocket(socket, '/saude/prontidao')).toBe(200);
  const token = await access.masterToken();
  const tipos = await fetch(`${url}/tipo-de-evento/filtro?nome=colaborador.atualizado`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(((await tipos.json()) as { nome: string }[]).map((t) => t.nome)).toEqual(['colaborador.atualizado']);

  bundle.kill('SIGTERM');
  const code = await exited;
  expect({ code, output: code === 0 ? '' : saida() }).toEqual({ code: 0, output: '' });
  expect(existsSync(socket)).toBe(false);
}, 60_000);

test('When the bundle runs with an OTLP endpoint, then express and pg (kept outside the bundle) are instrumented and the spans are exported', async () => {
  const spans: { traceId: string; parentSpanId?: string; spanId: string; name: string; kind: number }[] = [];
  const coletor = http.createServer((req, res) => {
    const partes: Buffer[] = [];
    req.on('data', (p: Buffer) => partes.push(p));
    req.on('end', () => {
      const corpo = JSON.parse(Buffer.concat(partes).toString('utf8')) as {
        resourceSpans: { scopeSpans: { spans: (typeof spans)[number][] }[] }[];
      };
      for (const rs of corpo.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => coletor.listen(0, '127.0.0.1', resolve));
  try {
    const { bundle, url, exited, output } = await iniciarBundle({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(coletor.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const traceId = randomBytes(16).toString('hex');
    const token = await access.masterToken();
    const tipos = await fetch(`${url}/tipo-de-evento/filtro?nome=colaborador.atualizado`, {
      headers: { authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(tipos.status).toBe(200);
    const doTraco = () => spans.filter((s) => s.traceId === traceId);
    // http (built in, never bundled), express's request handler, and pg's queries under it
    await waitFor(() => doTraco().some((s) => s.kind === 2), { what: 'the server span' });
    await waitFor(() => doTraco().some((s) => s.name === 'request handler'), { what: 'an express span' });
    await waitFor(() => doTraco().some((s) => s.name.startsWith('pg.query')), { what: 'a pg span' });
    bundle.kill('SIGTERM');
    const code = await exited;
    expect({ code, output: code === 0 ? '' : output() }).toEqual({ code: 0, output: '' });
  } finally {
    coletor.close();
  }
}, 60_000);
