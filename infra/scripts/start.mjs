// `pnpm start`: checks PostgreSQL and RabbitMQ, generates the Prisma clients, bundles every service
// (infra/scripts/build.mjs) and runs each bundle with plain node, as production does; each creates and
// migrates its own database. It waits until each is ready, prints where to look, then seeds a demo
// and prints its first publication (README's "Publishing a first event").
// Ctrl-C or SIGTERM stops everything. A service that dies after it was ready is started again, with a
// pause that doubles up to 30 s (logged with its last lines); one that dies before it was ever
// ready stops everything (its configuration is wrong: restarting cannot help).
// `pnpm dev` (`--dev`): no bundle; each service runs from its TypeScript with `tsx watch`, restarted
// when a file changes (a service that crashes waits for a change instead of stopping the others).
//
// Environment: the caller's, passed to every service (`COMPANY_DOMAIN=x.com pnpm start`).
// START_TIMEOUT (seconds a service may take to be ready, default 90), START_SEED=false (no demo),
// START_LOG_FORMAT=json (raw logs), START_WITHOUT (services not to start, comma-separated, e.g.
// `delivery-worker` to run it elsewhere or to measure publication alone), START_UNIX_SOCKETS=true
// (the gateway reaches the services on Unix sockets, not on their ports), and the *_PORT variables.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { buildPanel, buildService } from './build.mjs';
import { canConnect, isPortFree, missingInfrastructure, waitUntilReady } from './lib/checks.mjs';
import { Child, formatLine, Supervised } from './lib/processes.mjs';

const root = path.resolve(import.meta.dirname, '../..');
const STOP_GRACE_MS = 10_000;
const READY_TIMEOUT_MS = Number(process.env.START_TIMEOUT ?? 90) * 1000;
const DEV = process.argv.includes('--dev');
const WITHOUT = (process.env.START_WITHOUT ?? '')
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean);
const TSX_CLI = path.join(root, 'node_modules/tsx/dist/cli.mjs');

/** In start order. `urlVar`: how the other services find this one. */
const SERVICES = [
  { name: 'identity-dev', portVar: 'IDENTITY_DEV_PORT', port: 8085 },
  // socketVar: the Unix socket the service also serves on, which the gateway uses (see plan()).
  { name: 'access', portVar: 'ACCESS_PORT', port: 8081, urlVar: 'ACCESS_URL', socketVar: 'ACCESS_SOCKET' },
  { name: 'function', portVar: 'FUNCTION_PORT', port: 8082, urlVar: 'FUNCTION_URL', socketVar: 'FUNCTION_SOCKET' },
  // heapMb: V8's old space capped, as infra/docker/run-service.sh does (NODE_MAX_OLD_SPACE_MB overrides, 0: none).
  // Its young generation is set with the cap: on Node 24 V8 grows it to 64 MB semi-spaces, and
  // beside a 192 MB old space hub-api then spent about a third of its time collecting (docs/decisions/v8-heap-settings.md).
  {
    name: 'hub-api',
    portVar: 'HUB_API_PORT',
    port: 8083,
    urlVar: 'HUB_API_URL',
    socketVar: 'HUB_API_SOCKET',
    heapMb: 192,
    semiMb: 16,
  },
  // semiMb: V8's young generation (--max-semi-space-size), as run-service.sh does (NODE_MAX_SEMI_SPACE_MB
  // overrides, 0: V8's default): the worker's jobs in flight outlive a 16 MB one (docs/decisions/delivery-worker-cpu.md, third pass).
  // The demo receiver before the worker: deliveries left pending by an earlier run go out as soon as
  // the worker starts, and with the receiver not yet listening twenty refusals opened its circuit,
  // so the first publication of this run waited out the circuit (seen in a CI rehearsal).
  { name: 'demo-receiver', portVar: 'DEMO_RECEIVER_PORT', port: 8086, urlVar: 'DEMO_RECEIVER_URL' },
  { name: 'delivery-worker', portVar: 'DELIVERY_WORKER_PORT', port: 8084, semiMb: 32 },
  { name: 'gateway', portVar: 'GATEWAY_PORT', port: 8080 },
];
const ROUTED = ['access', 'function', 'hub-api'];

const say = (text = '') => process.stdout.write(`${text}\n`);
const fail = (text) => process.stderr.write(`\n✗ ${text}\n`);

function plan() {
  const services = SERVICES.map((s) => ({
    ...s,
    port: Number(process.env[s.portVar] ?? s.port),
    main: path.join('services', s.name, 'src', 'main.ts'),
    bundle: path.join('services', s.name, 'dist', 'main.js'),
  }));
  for (const name of WITHOUT.filter((n) => !services.some((s) => s.name === n))) {
    fail(`START_WITHOUT names ${name}, which is not a service (${services.map((s) => s.name).join(', ')})`);
    process.exit(1);
  }
  const present = services.filter((s) => existsSync(path.join(root, s.main)) && !WITHOUT.includes(s.name));
  for (const s of services.filter((x) => !present.includes(x)))
    say(`· ${s.name}: not started (${WITHOUT.includes(s.name) ? 'START_WITHOUT' : `${s.main} does not exist yet`})`);

  const port = (name) => services.find((s) => s.name === name).port;
  const env = { ...process.env };
  for (const s of services) {
    env[s.portVar] = String(s.port);
    if (s.urlVar) env[s.urlVar] ??= `http://127.0.0.1:${s.port}`;
  }
  // Unset, every service would run as PRODUCTION: `pnpm start` is a developer's machine unless told otherwise.
  env.HUB_AMBIENTE ??= 'LOCALHOST';
  env.IDENTITY_JWKS_URL ??= `http://127.0.0.1:${port('identity-dev')}/.well-known/jwks.json`;
  env.HUB_JWKS_URL ??= `http://127.0.0.1:${port('hub-api')}/.well-known/jwks.json`;
  env.GATEWAY_URL ??= `http://127.0.0.1:${port('gateway')}`;
  env.IDENTITY_URL ??= `http://127.0.0.1:${port('identity-dev')}`;
  env.GATEWAY_LOCALHOST_URL ??= `http://127.0.0.1:${port('gateway')}`;
  env.GATEWAY_UPSTREAMS ??= ROUTED.filter((name) => present.some((s) => s.name === name)).join(',');
  return { present, env, port, gatewayEnv: gatewayEnvOf(present, env) };
}

/** Where the routed services' Unix sockets go; a socket's path holds 107 bytes at most. */
const RUN_DIR = path.join(root, '.data/run');
const SOCKET_PATH_MAX_BYTES = 107;

/**
 * With START_UNIX_SOCKETS=true, the gateway reaches each routed service over a Unix socket the
 * service serves beside its port (docs/decisions/unix-socket-upstreams.md): the hop costs both processes a little less than loopback TCP. Off by
 * default: with it, the healthy subscribers' p99 beside a failing one (bench/delivery/third-of-subscribers-failing.ts) was 2.6-5.2x
 * the all-healthy one in four runs against 1.1-1.2x over TCP, for a cause not found yet. The others
 * keep the ports. A socket the caller set (HUB_API_SOCKET…) is the one used; none for a service whose
 * URL the caller set, nor when the checkout's path makes the socket's path too long. The socket is
 * named by the service's port, so two platforms of one checkout (a benchmark's beside `pnpm start`)
 * do not meet.
 */
function gatewayEnvOf(present, env) {
  const gatewayEnv = { ...env };
  if (process.env.START_UNIX_SOCKETS !== 'true') return gatewayEnv;
  for (const s of present.filter((x) => x.socketVar && ROUTED.includes(x.name))) {
    if (process.env[s.urlVar] !== undefined) continue;
    let socket = process.env[s.socketVar];
    if (socket === undefined) {
      socket = path.join(RUN_DIR, `${s.name}-${s.port}.sock`);
      if (Buffer.byteLength(socket) > SOCKET_PATH_MAX_BYTES) continue;
      mkdirSync(RUN_DIR, { recursive: true, mode: 0o700 });
      env[s.socketVar] = socket;
    }
    gatewayEnv[s.urlVar] = `unix:${socket}`;
  }
  return gatewayEnv;
}

const children = [];
let stopping = false;

async function stopAll(exitCode) {
  if (stopping) return;
  stopping = true;
  const running = children.filter((c) => c.running);
  if (running.length) say(`\nstopping ${running.map((c) => c.name).join(', ')}…`);
  await Promise.all([...running].reverse().map((c) => c.stop(STOP_GRACE_MS)));
  process.exit(exitCode);
}

function showLastLines(child) {
  if (!child.lastLines.length) return;
  process.stderr.write(
    `  last lines of ${child.name}:\n${child.lastLines
      .slice(-20)
      .map((l) => `    ${formatLine(l)}`)
      .join('\n')}\n`,
  );
}

async function printReady(port, env) {
  const gateway = `http://localhost:${port('gateway')}`;
  const identity = `http://localhost:${port('identity-dev')}`;
  const domain = (env.COMPANY_DOMAIN ?? 'empresa.com.br').replace(/^@/, '');
  const management = env.RABBITMQ_MANAGEMENT_URL ?? 'http://localhost:15672';
  const managementUp = await canConnect(new URL(management).hostname, Number(new URL(management).port || 15672));
  say('');
  say('Event hub is running.');
  say(`  Gateway        ${gateway}`);
  say(`  Panel          ${gateway}/painel/  (sign in with any e-mail of ${domain}; tick master for everything)`);
  say(`  API docs       ${gateway}/docs`);
  say(`  OpenAPI        ${gateway}/openapi.json`);
  say(`  Token          POST ${identity}/token  (identity-dev, the identity stand-in)`);
  if (managementUp) say(`  RabbitMQ UI    ${management}  (guest / guest)`);
  say('');
  say('Get a master token and call the API:');
  say(
    `  TOKEN=$(curl -s -X POST ${identity}/token -H 'content-type: application/json' ` +
      `-d '{"email":"admin@${domain}","nome":"Admin","master":true}' | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
  );
  say(`  curl -s ${gateway}/auth/acesso -H "authorization: Bearer $TOKEN"`);
  say('');
}

async function main() {
  const missing = await missingInfrastructure(process.env);
  if (missing.length) {
    fail(
      `cannot start: ${missing.length === 1 ? 'a dependency is' : 'dependencies are'} missing.\n\n  ${missing.join('\n\n  ')}\n`,
    );
    process.exit(1);
  }
  execFileSync(process.execPath, [path.join(root, 'infra/scripts/generate.mjs')], { cwd: root, stdio: 'inherit' });

  const { present, env, port, gatewayEnv } = plan();
  if (!DEV) {
    const started = Date.now();
    await Promise.all([...present.map((s) => buildService(s.name)), buildPanel()]);
    say(`✓ built ${present.length} services into services/*/dist and the panel (${Date.now() - started} ms)`);
  } else if (!existsSync(path.join(root, 'services/panel/dist/index.html'))) {
    // tsx watch does not build the panel; built once so /painel/ works (`pnpm --filter @hub/panel dev` for its own watch).
    await buildPanel();
    say('✓ built the panel into services/panel/dist');
  }
  for (const s of present) {
    if (!(await isPortFree(s.port))) {
      fail(
        `port ${s.port} (${s.portVar}) for ${s.name} is already in use. Is \`pnpm start\` already running? Stop it or set ${s.portVar}.`,
      );
      process.exit(1);
    }
  }

  process.on('SIGINT', () => stopAll(0));
  process.on('SIGTERM', () => stopAll(0));
  const width = Math.max(...present.map((s) => s.name.length));
  for (const [index, s] of present.entries()) {
    // Source maps are written beside each bundle; NODE_OPTIONS=--enable-source-maps uses them
    // (about 50 MB more per process, so not by default, as in the Docker image).
    const heapMb = Number(process.env.NODE_MAX_OLD_SPACE_MB ?? s.heapMb ?? 0);
    const semiMb = Number(process.env.NODE_MAX_SEMI_SPACE_MB ?? s.semiMb ?? 0);
    const heap = [
      ...(heapMb > 0 ? [`--max-old-space-size=${heapMb}`] : []),
      ...(semiMb > 0 ? [`--max-semi-space-size=${semiMb}`] : []),
    ];
    const args = DEV ? [TSX_CLI, 'watch', '--clear-screen=false', s.main] : [...heap, s.bundle];
    const child = new Supervised({
      name: s.name,
      start: () =>
        new Child({ name: s.name, args, cwd: root, env: s.name === 'gateway' ? gatewayEnv : env, index, width }),
      say: (text) => process.stderr.write(`\n${text}\n`),
      waitReady: (restarted) =>
        waitUntilReady(`http://127.0.0.1:${s.port}`, {
          timeoutMs: READY_TIMEOUT_MS,
          gaveUp: () => stopping || !restarted.running,
        }),
      onFailedStart: ({ code, signal }) => {
        if (stopping) return;
        fail(`${s.name} exited before it was ready (${signal ?? `code ${code}`}); stopping everything.`);
        showLastLines(child);
        stopAll(1);
      },
    });
    children.push(child);
    const started = Date.now();
    try {
      await waitUntilReady(`http://127.0.0.1:${s.port}`, {
        timeoutMs: READY_TIMEOUT_MS,
        gaveUp: () => stopping || !child.running,
      });
    } catch (error) {
      if (stopping) return;
      fail(`${s.name} did not become ready: ${error.message}`);
      showLastLines(child);
      return stopAll(1);
    }
    child.markReady();
    say(`✓ ${s.name} ready on port ${s.port} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }

  if (stopping) return;
  await printReady(port, env);
  // The demo last, so that its first publication (README's steps 2 and 3) is what the screen ends with.
  const seed = path.join(root, 'infra/scripts/seed-demo.ts');
  if (process.env.START_SEED !== 'false' && existsSync(seed)) {
    say('seeding the demo (infra/scripts/seed-demo.ts)…');
    const seeding = spawn(process.execPath, ['--import', 'tsx', seed], { cwd: root, env, stdio: 'inherit' });
    const code = await new Promise((resolve) => seeding.once('exit', (c) => resolve(c)));
    if (code !== 0 && !stopping) fail('the demo seed failed (see above); the platform keeps running without it.');
  }
  if (!stopping) say('Ctrl-C stops everything.');
}

main().catch((error) => {
  fail(error instanceof Error ? error.message : String(error));
  stopAll(1);
});
