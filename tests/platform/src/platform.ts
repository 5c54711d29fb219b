import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { withDatabase } from '@hub/database';
import { dropDatabase, unusedTestDatabase } from '@hub/testing';
import { type ServiceProcess, startServiceProcess } from './service-process';
import { ownVhost } from './vhost';

/** The services `pnpm start` runs, in a start order where each needs only the ones before it (`pnpm start` starts the demo receiver before the worker). */
export const SERVICE_NAMES = [
  'identity-dev',
  'access',
  'function',
  'hub-api',
  'delivery-worker',
  'demo-receiver',
  'gateway',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

const ROOT = path.resolve(__dirname, '../../..');
/** Like `pnpm start`, a service whose main.ts does not exist yet is not started. */
export const isPresent = (name: ServiceName) => existsSync(path.join(ROOT, 'services', name, 'src', 'main.ts'));
/** The services that own a database, and the database name prefix of each. */
export const DATABASES = { access: 'hub_access', function: 'hub_function', 'hub-api': 'hub_events' } as const;
export type ServiceWithDatabase = keyof typeof DATABASES;

export interface PlatformOptions {
  /** Extra environment of one service, over the harness's (e.g. `{ gateway: { RATE_LIMIT_PER_MINUTE: '10' } }`). */
  env?: Partial<Record<ServiceName, NodeJS.ProcessEnv>>;
  /** How long one service may take to be ready. */
  readyTimeoutMs?: number;
  /**
   * The broker as is (a cluster's nodes separated by commas); by default the platform gets a virtual
   * host of its own beside RABBITMQ_URL's.
   */
  rabbitmqUrl?: string;
  /**
   * The admin URL (`…/postgres`) of the PostgreSQL server that holds the services' databases, e.g. a
   * private one a fault test restarts; by default the shared test server.
   */
  postgresUrl?: string;
  /**
   * The admin URL of a read replica of `postgresUrl` (HAProxy's read-only port of a Patroni cluster):
   * hub-api gets HUB_DATABASE_READ_URL on it, for the same database.
   */
  postgresReadUrl?: string;
  /** Whether the delivery worker runs (default true); without it, deliveries stay `pendente`. */
  deliveryWorker?: boolean;
  /** Processes of hub-api and of the delivery worker (default 1 each); the gateway spreads over the hub-apis. */
  instancias?: number;
}

export interface Platform {
  /** The public entry. */
  gatewayUrl: string;
  /** The services running, in start order. */
  services: ServiceName[];
  /** The own address of each running service. */
  urls: Record<ServiceName, string>;
  /** The broker and virtual host the services use (removed by stop() when it is the platform's own). */
  rabbitmqUrl: string;
  /** Connection URL of each service's database (fresh, dropped by stop()). */
  databases: Record<ServiceWithDatabase, string>;
  /** A user token from identity-dev (POST /token). */
  userToken(email: string, options?: { nome?: string; master?: boolean }): Promise<string>;
  /** An application token from identity-dev (POST /token/aplicativo). */
  applicationToken(clientId: string): Promise<string>;
  /** The last log lines of a service, for failure messages. */
  output(name: ServiceName): string;
  /** The address of every process of a service (several with `instancias`). */
  enderecos(name: ServiceName): string[];
  /** Every process of the platform now: which service, its pid, whether it still runs. */
  processos(): { name: ServiceName; pid: number; running: boolean; url: string }[];
  /** SIGTERM to every service (gateway first), their exit codes, then the databases and key files are removed. */
  stop(): Promise<Partial<Record<ServiceName, number | null>>>;
  /** kill -9 of one service (a crash), nothing restarted. */
  matar(name: ServiceName): Promise<void>;
  /**
   * Starts a service again with the environment it had (after matar, or it is killed first).
   * Give the service a fixed port in `env` when others reach it by its URL (the gateway, hub-api).
   */
  reiniciar(name: ServiceName): Promise<void>;
}

/** What the start functions share: the environment, the options and the addresses of the services started so far. */
export interface PlatformSetup {
  base: NodeJS.ProcessEnv;
  options: PlatformOptions;
  urls: Partial<Record<ServiceName, string>>;
  keyDir: string;
  /** Every hub-api process's address, when there are several (the gateway takes them all). */
  hubApis?: string[];
}

/**
 * The bounds that refuse an overload by answer time (docs/decisions/overload-refused-fast.md) are out
 * of the way of the platform suites: their bursts and faults make answers slow on purpose, and they
 * check which refusals a fault gives (503 banco_indisponivel, say), not the shedding, which the
 * gateway's tests and bench/overload/three-times-saturation.ts measure. A test that wants them sets its own.
 */
const SEM_CORTE_POR_TEMPO: Partial<Record<ServiceName, NodeJS.ProcessEnv>> = {
  gateway: { GATEWAY_TARGET_LATENCY: '60s', GATEWAY_PUBLICATION_TARGET_LATENCY: '60s' },
  'hub-api': { HUB_PUBLICACOES_TEMPO_ALVO: '60s' },
};

const envOf = (setup: PlatformSetup, name: ServiceName, own: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...setup.base,
  ...SEM_CORTE_POR_TEMPO[name],
  ...own,
  ...setup.options.env?.[name],
});
const start = (setup: PlatformSetup, name: ServiceName, own: NodeJS.ProcessEnv) =>
  startServiceProcess(name, envOf(setup, name, own), setup.options.readyTimeoutMs);

export function startIdentityDev(setup: PlatformSetup): Promise<ServiceProcess> {
  return start(setup, 'identity-dev', {
    IDENTITY_DEV_PORT: '0',
    IDENTITY_DEV_KEY_FILE: path.join(setup.keyDir, 'identity-dev.json'),
  });
}

/** What every service that verifies tokens and asks access needs. */
const identityEnv = (setup: PlatformSetup): NodeJS.ProcessEnv => ({
  IDENTITY_JWKS_URL: `${setup.urls['identity-dev']}/.well-known/jwks.json`,
  ACCESS_URL: setup.urls.access,
});

export function startAccess(setup: PlatformSetup, databaseUrl: string): Promise<ServiceProcess> {
  return start(setup, 'access', { ...identityEnv(setup), ACCESS_PORT: '0', ACCESS_DATABASE_URL: databaseUrl });
}

export function startFunction(setup: PlatformSetup, databaseUrl: string): Promise<ServiceProcess> {
  return start(setup, 'function', { ...identityEnv(setup), FUNCTION_PORT: '0', FUNCTION_DATABASE_URL: databaseUrl });
}

export function startHubApi(setup: PlatformSetup, databaseUrl: string): Promise<ServiceProcess> {
  return start(setup, 'hub-api', {
    ...identityEnv(setup),
    HUB_API_PORT: '0',
    HUB_DATABASE_URL: databaseUrl,
    ...(setup.options.postgresReadUrl
      ? { HUB_DATABASE_READ_URL: withDatabase(setup.options.postgresReadUrl, new URL(databaseUrl).pathname.slice(1)) }
      : {}),
    HUB_SIGNING_KEYS_FILE: path.join(setup.keyDir, 'hub-signing-keys.json'),
  });
}

/** The delivery worker shares the hub's database and signing keys (architecture §1). */
export function startDeliveryWorker(setup: PlatformSetup, databaseUrl: string): Promise<ServiceProcess> {
  return start(setup, 'delivery-worker', {
    ...identityEnv(setup),
    DELIVERY_WORKER_PORT: '0',
    HUB_DATABASE_URL: databaseUrl,
    HUB_API_URL: setup.urls['hub-api'],
    HUB_SIGNING_KEYS_FILE: path.join(setup.keyDir, 'hub-signing-keys.json'),
  });
}

export function startDemoReceiver(setup: PlatformSetup): Promise<ServiceProcess> {
  return start(setup, 'demo-receiver', {
    DEMO_RECEIVER_PORT: '0',
    HUB_JWKS_URL: `${setup.urls['hub-api']}/.well-known/jwks.json`,
  });
}

export function startGateway(setup: PlatformSetup): Promise<ServiceProcess> {
  return start(setup, 'gateway', {
    // The gateway verifies tokens to key its rate limit on the caller.
    IDENTITY_JWKS_URL: `${setup.urls['identity-dev']}/.well-known/jwks.json`,
    GATEWAY_PORT: '0',
    GATEWAY_METRICS_PORT: '0',
    ACCESS_URL: setup.urls.access,
    FUNCTION_URL: setup.urls.function,
    HUB_API_URL: setup.hubApis?.join(',') ?? setup.urls['hub-api'],
    GATEWAY_UPSTREAMS: 'access,function,hub-api',
    GATEWAY_OPENAPI_CACHE: '1s',
  });
}

async function postToken(url: string, body: object): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/**
 * The platform as `pnpm start` runs it: every service its own process (node --import tsx
 * services/<name>/src/main.ts) on a free port, with fresh databases (created and migrated by the
 * services themselves), key files in a temporary folder, and a virtual host of its own on the broker
 * of RABBITMQ_URL (see ownVhost). Resolves when every /saude/prontidao is 200. Nothing of a service is imported: tests
 * talk to it over HTTP (and RabbitMQ).
 */
export async function startPlatform(options: PlatformOptions = {}): Promise<Platform> {
  const fresh = (prefix: string) => {
    const database = unusedTestDatabase(prefix);
    return options.postgresUrl ? { ...database, url: withDatabase(options.postgresUrl, database.name) } : database;
  };
  const databases = {
    access: fresh(DATABASES.access),
    function: fresh(DATABASES.function),
    'hub-api': fresh(DATABASES['hub-api']),
  };
  const broker = options.rabbitmqUrl
    ? { url: options.rabbitmqUrl, remove: async () => undefined }
    : await ownVhost(process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
  const setup: PlatformSetup = {
    base: {
      ...process.env,
      RABBITMQ_URL: broker.url,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      HUB_AMBIENTE: 'LOCALHOST',
      IDENTITY_ISSUER: 'http://identity-dev.platform-tests',
      IDENTITY_AUDIENCE: 'event-hub',
    },
    options,
    urls: {},
    keyDir: await mkdtemp(path.join(tmpdir(), 'hub-platform-')),
  };
  const running: ServiceProcess[] = [];
  const stop = async () => {
    const codes: Partial<Record<ServiceName, number | null>> = {};
    for (const service of [...running].reverse()) codes[service.name as ServiceName] = await service.stop();
    await Promise.all(Object.values(databases).map((d) => dropDatabase(d.name, options.postgresUrl)));
    await rm(setup.keyDir, { recursive: true, force: true });
    await broker.remove();
    return codes;
  };
  const starters = new Map<ServiceName, () => Promise<ServiceProcess>>();
  const launch = async (name: ServiceName, starter: () => Promise<ServiceProcess>) => {
    starters.set(name, starter);
    const service = await starter();
    running.push(service);
    setup.urls[service.name as ServiceName] = service.url;
  };

  try {
    await launch('identity-dev', () => startIdentityDev(setup));
    await launch('access', () => startAccess(setup, databases.access.url));
    // function and hub-api need only identity and access: start them together (both settled before
    // a failure of one stops the other, so no process is left behind).
    const together = await Promise.allSettled([
      launch('function', () => startFunction(setup, databases.function.url)),
      launch('hub-api', () => startHubApi(setup, databases['hub-api'].url)),
    ]);
    for (const result of together) if (result.status === 'rejected') throw result.reason;
    const n = Math.max(1, options.instancias ?? 1);
    if (n > 1) {
      // More processes of hub-api on the same database and broker (and the same key file), then the worker(s).
      for (let i = 1; i < n; i += 1) running.push(await startHubApi(setup, databases['hub-api'].url));
      setup.hubApis = running.filter((r) => r.name === 'hub-api').map((r) => r.url);
    }
    if (isPresent('delivery-worker') && options.deliveryWorker !== false) {
      await launch('delivery-worker', () => startDeliveryWorker(setup, databases['hub-api'].url));
      for (let i = 1; i < n; i += 1) running.push(await startDeliveryWorker(setup, databases['hub-api'].url));
    }
    if (isPresent('demo-receiver')) await launch('demo-receiver', () => startDemoReceiver(setup));
    await launch('gateway', () => startGateway(setup));
  } catch (error) {
    await stop();
    throw error;
  }

  const urls = setup.urls as Record<ServiceName, string>;
  return {
    gatewayUrl: urls.gateway,
    services: running.map((s) => s.name as ServiceName),
    urls,
    rabbitmqUrl: broker.url,
    databases: {
      access: databases.access.url,
      function: databases.function.url,
      'hub-api': databases['hub-api'].url,
    },
    userToken: (email, extra = {}) => postToken(`${urls['identity-dev']}/token`, { email, ...extra }),
    applicationToken: (clientId) => postToken(`${urls['identity-dev']}/token/aplicativo`, { client_id: clientId }),
    output: (name) => running.find((s) => s.name === name)?.output() ?? '',
    enderecos: (name) => running.filter((s) => s.name === name).map((s) => s.url),
    processos: () =>
      running.map((s) => ({ name: s.name as ServiceName, pid: s.pid, running: s.running(), url: s.url })),
    stop,
    matar: async (name) => {
      await running.find((s) => s.name === name)?.kill();
    },
    reiniciar: async (name) => {
      const i = running.findIndex((s) => s.name === name);
      const starter = starters.get(name);
      if (i === -1 || !starter) throw new Error(`${name} is not part of this platform`);
      await running[i]!.kill();
      const service = await starter();
      running[i] = service;
      setup.urls[name] = service.url;
    },
  };
}
