import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { BENCH_PREFIX, benchDatabaseUrl, dropBenchDatabases, dropDatabasesLike } from './databases';
import { freePort, freshVhost } from './local-infra';

export interface Platform {
  gatewayUrl: string;
  identityUrl: string;
  /** Known only when the benchmark started the platform itself. */
  accessUrl?: string;
  /** hub-api itself, not through the gateway; known only when the benchmark started the platform. */
  hubApiUrl?: string;
  /** The Unix socket hub-api also serves on, which the gateway uses (start.mjs); when the benchmark started the platform. */
  hubApiSocket?: string;
  /** The /metrics of hub-api and of the delivery worker; known only when the benchmark started the platform. */
  metricsUrls?: string[];
  /** The RabbitMQ URL the platform uses (its own vhost when the benchmark started it). */
  rabbitmqUrl?: string;
  /** Every database of the platform starts so (known only when the benchmark started it). */
  databasePrefix?: string;
  /**
   * hub_events, for a benchmark that writes there what publication would (bench/support/bulk-backlog.ts); known
   * when the benchmark started the platform, or given as BENCH_HUB_DATABASE_URL with BENCH_GATEWAY_URL.
   */
  hubDatabaseUrl?: string;
  mode: string;
  /** start.mjs's process, whose children are the services; known when the benchmark started the platform. */
  pid?: number;
  stop(): Promise<void>;
}

const root = path.resolve(__dirname, '../..');

async function waitReady(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the platform exited (code ${child.exitCode})`);
    const ok = await fetch(`${url}/saude/prontidao`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`the platform was not ready within ${timeoutMs / 1000} s`);
}

/**
 * BENCH_GATEWAY_URL set: use that running platform (BENCH_IDENTITY_URL, default :8085).
 * Otherwise start one with `infra/scripts/start.mjs` on free ports, fresh databases of its own
 * (hub_bench_<run>_*, dropped afterwards), its own RabbitMQ vhost and no rate limit, and stop it afterwards.
 */
export interface PlatformOptions {
  /** The RabbitMQ vhost made anew for the platform (default hub_bench). */
  vhost?: string;
  /**
   * Drop only this run's databases (hub_bench_<run>_*) instead of every hub_bench_* one, so that
   * a benchmark beside another one does not drop its databases.
   */
  ownDatabasesOnly?: boolean;
  /** Services start.mjs leaves out (START_WITHOUT), e.g. 'delivery-worker'. */
  without?: string;
  /** Settings of the services for this run (e.g. DELIVERY_TIMEOUT); a running platform keeps its own. */
  env?: Record<string, string>;
}

export async function obtainPlatform(log: (line: string) => void, options: PlatformOptions = {}): Promise<Platform> {
  if (process.env.BENCH_GATEWAY_URL) {
    return {
      gatewayUrl: process.env.BENCH_GATEWAY_URL.replace(/\/+$/, ''),
      identityUrl: (process.env.BENCH_IDENTITY_URL ?? 'http://127.0.0.1:8085').replace(/\/+$/, ''),
      hubDatabaseUrl: process.env.BENCH_HUB_DATABASE_URL,
      mode: `running platform at ${process.env.BENCH_GATEWAY_URL}`,
      stop: async () => undefined,
    };
  }
  const [gateway, gatewayMetrics, access, fn, hubApi, worker, identity, receiver] = await Promise.all(
    Array.from({ length: 8 }, freePort),
  );
  const run = Date.now().toString(36);
  const dropDatabases = options.ownDatabasesOnly
    ? () => dropDatabasesLike(`${BENCH_PREFIX}${run}_`)
    : () => dropBenchDatabases();
  await dropDatabases();
  const vhostName = options.vhost ?? 'hub_bench';
  const vhost = freshVhost(vhostName) ? vhostName : undefined;
  const rabbitmqUrl = vhost
    ? `amqp://guest:guest@127.0.0.1:5672/${encodeURIComponent(vhost)}`
    : (process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
  if (!vhost) log('note: rabbitmqctl unavailable; the benchmark platform shares the default RabbitMQ vhost');
  // START_UNIX_SOCKETS=true: the gateway reaches hub-api on this socket (start.mjs), and a bare pipe of
  // a benchmark may use it too; otherwise both use the port.
  const hubApiSocket =
    process.env.START_UNIX_SOCKETS === 'true'
      ? path.join(root, '.data/run', `bench-hub-api-${hubApi}.sock`)
      : undefined;
  if (hubApiSocket) mkdirSync(path.dirname(hubApiSocket), { recursive: true, mode: 0o700 });
  const env = {
    ...process.env,
    GATEWAY_PORT: String(gateway),
    GATEWAY_METRICS_PORT: String(gatewayMetrics),
    ACCESS_PORT: String(access),
    FUNCTION_PORT: String(fn),
    HUB_API_PORT: String(hubApi),
    ...(hubApiSocket ? { HUB_API_SOCKET: hubApiSocket } : {}),
    DELIVERY_WORKER_PORT: String(worker),
    IDENTITY_DEV_PORT: String(identity),
    DEMO_RECEIVER_PORT: String(receiver),
    ACCESS_DATABASE_URL: benchDatabaseUrl(run, 'access'),
    FUNCTION_DATABASE_URL: benchDatabaseUrl(run, 'function'),
    HUB_DATABASE_URL: benchDatabaseUrl(run, 'events'),
    RABBITMQ_URL: rabbitmqUrl,
    // The benchmark measures the platform, not the limiter: every caller class is let through.
    RATE_LIMIT_PER_MINUTE: '1000000000',
    RATE_LIMIT_USER_PER_MINUTE: '1000000000',
    RATE_LIMIT_APPLICATION_PER_MINUTE: '1000000000',
    START_SEED: 'false',
    ...(options.without ? { START_WITHOUT: options.without } : {}),
    ...options.env,
    START_LOG_FORMAT: 'json',
  };
  const logDir = path.join(root, '.data/bench');
  mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, 'platform.log');
  const child = spawn(process.execPath, [path.join(root, 'infra/scripts/start.mjs')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = createWriteStream(logFile);
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  log(`starting the platform on free ports (gateway ${gateway}); its logs: ${path.relative(root, logFile)}`);
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    await dropDatabases().catch((error) =>
      log(`note: could not drop the benchmark databases: ${(error as Error).message}`),
    );
  };
  try {
    await waitReady(`http://127.0.0.1:${gateway}`, child, 180_000);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}; see ${logFile}`);
  }
  return {
    gatewayUrl: `http://127.0.0.1:${gateway}`,
    identityUrl: `http://127.0.0.1:${identity}`,
    accessUrl: `http://127.0.0.1:${access}`,
    hubApiUrl: `http://127.0.0.1:${hubApi}`,
    ...(hubApiSocket ? { hubApiSocket } : {}),
    metricsUrls: [`http://127.0.0.1:${hubApi}/metrics`, `http://127.0.0.1:${worker}/metrics`],
    rabbitmqUrl,
    databasePrefix: `${BENCH_PREFIX}${run}_`,
    hubDatabaseUrl: env.HUB_DATABASE_URL,
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    mode: `platform started by the benchmark (start.mjs on free ports${hubApiSocket ? ', the gateway to hub-api over a Unix socket' : ''}, fresh hub_bench_* databases, own RabbitMQ vhost, rate limit off)`,
    stop,
  };
}
