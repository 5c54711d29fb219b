/**
 * Idle memory of every service, run the old way (TypeScript through the tsx loader) and the
 * production way (the esbuild bundle in services/<name>/dist, plain node).
 *
 * Run from the root: npx tsx bench/memory/idle-rss.ts
 *
 * For each way, the platform is started service by service on free ports, against fresh databases
 * (hub_rss_<run>_*, dropped afterwards) and a RabbitMQ virtual host of its own (hub_rss), each
 * waited for until GET /saude/prontidao answers 200 (the gateway's asks every service, so each has
 * touched its database and broker once). Then nothing is sent for BENCH_RSS_IDLE_MS (default 5000)
 * and VmRSS is read from /proc/<pid>/status of each service's own node process.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dropDatabasesLike } from '../support/databases';
import { deleteVhost, freePort, freshVhost } from '../support/local-infra';

const root = path.resolve(__dirname, '../..');
const ADMIN_URL = process.env.DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const PREFIX = 'hub_rss_';
const VHOST = 'hub_rss';
const IDLE_MS = Number(process.env.BENCH_RSS_IDLE_MS ?? 5000);
const READY_TIMEOUT_MS = 120_000;
const TARGET_MB = 120;

/** In start order: each is ready only when what it asks is already there. */
const ORDER = ['identity-dev', 'access', 'function', 'hub-api', 'demo-receiver', 'gateway'];
const services = ORDER.filter((name) => existsSync(path.join(root, 'services', name, 'src/main.ts')));
const unlisted = readdirSync(path.join(root, 'services')).filter(
  (name) => existsSync(path.join(root, 'services', name, 'src/main.ts')) && !ORDER.includes(name),
);
if (unlisted.length) throw new Error(`bench/memory/idle-rss.ts does not know where to start ${unlisted.join(', ')}`);

type Way = 'tsx' | 'bundle';
const command: Record<Way, (name: string) => string[]> = {
  tsx: (name) => ['--import', 'tsx', path.join('services', name, 'src/main.ts')],
  bundle: (name) => [path.join('services', name, 'dist/main.js')],
};

async function waitReady(url: string, child: ChildProcess, name: string, output: string[]): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited (code ${child.exitCode}):\n${output.join('')}`);
    const ok = await fetch(`${url}/saude/prontidao`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${name} was not ready within ${READY_TIMEOUT_MS / 1000} s`);
}

const statusKb = (pid: number, field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** Starts the platform one way, lets it idle, and answers each service's RSS in MB. */
async function measure(way: Way, run: string): Promise<Map<string, number>> {
  // Anew for each way, so neither consumes what the other left in a queue.
  if (!freshVhost(VHOST)) throw new Error('rabbitmqctl is needed to make the virtual host ' + VHOST);
  const ports = Object.fromEntries(await Promise.all(services.map(async (name) => [name, await freePort()] as const)));
  const url = (name: string) => `http://127.0.0.1:${ports[name]}`;
  const keys = mkdtempSync(path.join(tmpdir(), 'hub-rss-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HUB_AMBIENTE: 'LOCALHOST',
    LOG_LEVEL: 'warn',
    RABBITMQ_URL: `amqp://guest:guest@127.0.0.1:5672/${VHOST}`,
    IDENTITY_DEV_PORT: String(ports['identity-dev']),
    ACCESS_PORT: String(ports.access),
    FUNCTION_PORT: String(ports.function),
    HUB_API_PORT: String(ports['hub-api']),
    DEMO_RECEIVER_PORT: String(ports['demo-receiver']),
    GATEWAY_PORT: String(ports.gateway),
    IDENTITY_JWKS_URL: `${url('identity-dev')}/.well-known/jwks.json`,
    IDENTITY_ISSUER: url('identity-dev'),
    ACCESS_URL: url('access'),
    FUNCTION_URL: url('function'),
    HUB_API_URL: url('hub-api'),
    HUB_JWKS_URL: `${url('hub-api')}/.well-known/jwks.json`,
    ACCESS_DATABASE_URL: scratchUrl(run, way, 'access'),
    FUNCTION_DATABASE_URL: scratchUrl(run, way, 'function'),
    HUB_DATABASE_URL: scratchUrl(run, way, 'events'),
    HUB_SIGNING_KEYS_FILE: path.join(keys, 'hub.json'),
    IDENTITY_DEV_KEY_FILE: path.join(keys, 'identity.json'),
  };
  const children: { name: string; child: ChildProcess }[] = [];
  try {
    for (const name of services) {
      const child = spawn(process.execPath, command[way](name), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push({ name, child });
      // The last lines, to say why a service did not come up (and so that a full pipe never blocks it).
      const output: string[] = [];
      for (const stream of [child.stdout, child.stderr])
        stream?.on('data', (chunk: Buffer) => {
          output.push(chunk.toString());
          if (output.length > 20) output.shift();
        });
      await waitReady(url(name), child, name, output);
    }
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return new Map(children.map(({ name, child }) => [name, statusKb(child.pid as number, 'VmRSS') / 1024]));
  } finally {
    await Promise.all(
      children.map(({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return undefined;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        return exited;
      }),
    );
    rmSync(keys, { recursive: true, force: true });
  }
}

const scratchUrl = (run: string, way: Way, name: string) => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${PREFIX}${run}_${way}_${name}`;
  return url.toString();
};

async function main() {
  execFileSync(process.execPath, [path.join(root, 'infra/scripts/build.mjs'), ...services], {
    cwd: root,
    stdio: 'inherit',
  });
  const run = Date.now().toString(36);
  await dropDatabasesLike(PREFIX);
  try {
    const tsx = await measure('tsx', run);
    const bundle = await measure('bundle', run);
    const mb = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(1));
    console.log(`\nIdle RSS after ${IDLE_MS / 1000} s (VmRSS, MB), Node ${process.version}`);
    console.log('| service | tsx (node --import tsx src/main.ts) | bundle (node dist/main.js) | change |');
    console.log('| --- | ---: | ---: | ---: |');
    for (const name of services) {
      const before = tsx.get(name) as number;
      const after = bundle.get(name) as number;
      const change = `${(((after - before) / before) * 100).toFixed(0)} %`;
      console.log(`| ${name} | ${mb(before)} | ${mb(after)}${after > TARGET_MB ? ' (over target)' : ''} | ${change} |`);
    }
  } finally {
    await dropDatabasesLike(PREFIX);
    deleteVhost(VHOST);
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
