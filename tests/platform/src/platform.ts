import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dropDatabase, unusedTestDatabase } from '@hub/database';
import { type ServiceProcess, startServiceProcess } from './service-process';

/** The services `pnpm start` runs, in start order (each needs the ones before it). */
export type ServiceName = 'identity-dev' | 'access' | 'function' | 'hub-api' | 'gateway';
export const SERVICE_NAMES: readonly ServiceName[] = ['identity-dev', 'access', 'function', 'hub-api', 'gateway'];
/** The services that own a database, and the database name prefix of each. */
export const DATABASES = { access: 'hub_access', function: 'hub_function', 'hub-api': 'hub_events' } as const;
export type ServiceWithDatabase = keyof typeof DATABASES;

export interface PlatformOptions {
  /** Extra environment of one service, over the harness's (e.g. `{ gateway: { RATE_LIMIT_PER_MINUTE: '10' } }`). */
  env?: Partial<Record<ServiceName, NodeJS.ProcessEnv>>;
  /** How long one service may take to be ready. */
  readyTimeoutMs?: number;
}

export interface Platform {
  /** The public entry. */
  gatewayUrl: string;
  /** Every service's own address. */
  urls: Record<ServiceName, string>;
  /** Connection URL of each service's database (fresh, dropped by stop()). */
  databases: Record<ServiceWithDatabase, string>;
  /** A user token from identity-dev (POST /token). */
  userToken(email: string, options?: { nome?: string; master?: boolean }): Promise<string>;
  /** An application token from identity-dev (POST /token/aplicativo). */
  applicationToken(clientId: string): Promise<string>;
  /** The last log lines of a service, for failure messages. */
  output(name: ServiceName): string;
  /** SIGTERM to every service (gateway first), their exit codes, then the databases and key files are removed. */
  stop(): Promise<Record<ServiceName, number | null>>;
}

interface Shared {
  base: NodeJS.ProcessEnv;
  options: PlatformOptions;
  urls: Partial<Record<ServiceName, string>>;
  keyDir: string;
}

const envOf = (shared: Shared, name: ServiceName, own: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...shared.base,
  ...own,
  ...shared.options.env?.[name],
});
const start = (shared: Shared, name: ServiceName, own: NodeJS.ProcessEnv) =>
  startServiceProcess(name, envOf(shared, name, own), shared.options.readyTimeoutMs);

export function startIdentityDev(shared: Shared): Promise<ServiceProcess> {
  return start(shared, 'identity-dev', {
    IDENTITY_DEV_PORT: '0',
    IDENTITY_DEV_KEY_FILE: path.join(shared.keyDir, 'identity-dev.json'),
  });
}

/** What every service that verifies tokens and asks access needs. */
const identityEnv = (shared: Shared): NodeJS.ProcessEnv => ({
  IDENTITY_JWKS_URL: `${shared.urls['identity-dev']}/.well-known/jwks.json`,
  ACCESS_URL: shared.urls.access,
});

export function startAccess(shared: Shared, databaseUrl: string): Promise<ServiceProcess> {
  return start(shared, 'access', { ...identityEnv(shared), ACCESS_PORT: '0', ACCESS_DATABASE_URL: databaseUrl });
}

export function startFunction(shared: Shared, databaseUrl: string): Promise<ServiceProcess> {
  return start(shared, 'function', { ...identityEnv(shared), FUNCTION_PORT: '0', FUNCTION_DATABASE_URL: databaseUrl });
}

export function startHubApi(shared: Shared, databaseUrl: string): Promise<ServiceProcess> {
  return start(shared, 'hub-api', {
    ...identityEnv(shared),
    HUB_API_PORT: '0',
    HUB_DATABASE_URL: databaseUrl,
    HUB_SIGNING_KEYS_FILE: path.join(shared.keyDir, 'hub-signing-keys.json'),
  });
}

export function startGateway(shared: Shared): Promise<ServiceProcess> {
  return start(shared, 'gateway', {
    GATEWAY_PORT: '0',
    ACCESS_URL: shared.urls.access,
    FUNCTION_URL: shared.urls.function,
    HUB_API_URL: shared.urls['hub-api'],
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
 * services themselves), key files in a temporary folder and the broker of RABBITMQ_URL (the test
 * virtual host). Resolves when every /saude/prontidao is 200. Nothing of a service is imported: tests
 * talk to it over HTTP (and RabbitMQ).
 */
export async function startPlatform(options: PlatformOptions = {}): Promise<Platform> {
  const databases = {
    access: unusedTestDatabase(DATABASES.access),
    function: unusedTestDatabase(DATABASES.function),
    'hub-api': unusedTestDatabase(DATABASES['hub-api']),
  };
  const shared: Shared = {
    base: {
      ...process.env,
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
    const codes = {} as Record<ServiceName, number | null>;
    for (const service of [...running].reverse()) codes[service.name as ServiceName] = await service.stop();
    await Promise.all(Object.values(databases).map((d) => dropDatabase(d.name)));
    await rm(shared.keyDir, { recursive: true, force: true });
    return codes;
  };
  const launch = async (starting: Promise<ServiceProcess>) => {
    const service = await starting;
    running.push(service);
    shared.urls[service.name as ServiceName] = service.url;
  };

  try {
    await launch(startIdentityDev(shared));
    await launch(startAccess(shared, databases.access.url));
    // function and hub-api need only identity and access: start them together.
    await Promise.all([
      launch(startFunction(shared, databases.function.url)),
      launch(startHubApi(shared, databases['hub-api'].url)),
    ]);
    await launch(startGateway(shared));
  } catch (error) {
    await stop();
    throw error;
  }

  const urls = shared.urls as Record<ServiceName, string>;
  return {
    gatewayUrl: urls.gateway,
    urls,
    databases: {
      access: databases.access.url,
      function: databases.function.url,
      'hub-api': databases['hub-api'].url,
    },
    userToken: (email, extra = {}) => postToken(`${urls['identity-dev']}/token`, { email, ...extra }),
    applicationToken: (clientId) => postToken(`${urls['identity-dev']}/token/aplicativo`, { client_id: clientId }),
    output: (name) => running.find((s) => s.name === name)?.output() ?? '',
    stop,
  };
}
