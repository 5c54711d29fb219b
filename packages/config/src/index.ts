import { z } from 'zod';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses the environment once against a service's schema. A wrong or missing variable stops the
 * service at start with a message naming each variable and what is wrong with it. Outside
 * LOCALHOST a variable with a development default (see `developmentDefault`) must be set.
 */
export function loadConfig<S extends z.ZodObject>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): Readonly<z.infer<S>> {
  const lines = withoutDevelopmentDefaults(schema, env);
  const parsed = schema.safeParse(env);
  if (!parsed.success)
    lines.push(...parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`));
  if (lines.length) throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  return Object.freeze(parsed.data as z.infer<S>);
}

/**
 * A default that only fits a developer's machine (local broker with guest credentials, services on
 * 127.0.0.1). `loadConfig` applies it only when HUB_AMBIENTE is LOCALHOST; in SANDBOX and PRODUCTION
 * (and when HUB_AMBIENTE is absent, which is PRODUCTION) the variable must be set, so a forgotten one
 * stops the start instead of reaching for localhost.
 */
export function developmentDefault(value: string, schema: z.ZodType<string, string>) {
  return schema.default(value).meta({ [DEVELOPMENT_DEFAULT]: value });
}

const DEVELOPMENT_DEFAULT = 'developmentDefault';

/** The variables of `schema` that are missing and may not fall back, as lines of the error. */
function withoutDevelopmentDefaults(schema: z.ZodObject, env: NodeJS.ProcessEnv): string[] {
  const where = ambiente.safeParse(env.HUB_AMBIENTE);
  // A schema without HUB_AMBIENTE (demo-receiver's) still must not take a bad one for LOCALHOST.
  if (!where.success)
    return 'HUB_AMBIENTE' in schema.shape ? [] : ['  HUB_AMBIENTE: expected LOCALHOST, SANDBOX or PRODUCTION'];
  if (where.data === 'LOCALHOST') return [];
  return Object.entries(schema.shape)
    .filter(
      ([key, field]) => env[key] === undefined && (field as z.ZodType).meta()?.[DEVELOPMENT_DEFAULT] !== undefined,
    )
    .map(
      ([key]) =>
        `  ${key}: required when HUB_AMBIENTE is ${where.data}${env.HUB_AMBIENTE === undefined ? UNSET : ''} (its development default applies only in LOCALHOST)`,
    );
}

/** "true"/"1" are true, "false"/"0" are false; anything else is an error, never a silent false. */
export const booleanFromEnv = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

export const portFromEnv = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

const UNSET = ', as it is when unset; set HUB_AMBIENTE=LOCALHOST on a developer machine';

/**
 * Where the platform runs. Unset is PRODUCTION: LOCALHOST turns destination safety off and opens CORS
 * to every origin, so it must be asked for (`pnpm start`, docker-compose and the tests set it), never
 * reached by forgetting the variable.
 */
export const ambiente = z.enum(['LOCALHOST', 'SANDBOX', 'PRODUCTION']).default('PRODUCTION');
export type Ambiente = z.infer<typeof ambiente>;

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** "250ms", "5s", "2m", "1h", "7d" to milliseconds. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration like 500ms, 5s, 2m, 1h or 7d`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

export const durationFromEnv = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        return parseDuration(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });

/** A comma-separated list of durations, e.g. DELIVERY_RETRY_DELAYS="5s,30s,2m". */
export const durationListFromEnv = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        return text.split(',').map((part) => parseDuration(part));
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });

/** One AMQP URL, or several separated by commas (the nodes of a cluster, tried in turn). */
const amqpUrlList = z
  .string()
  .refine((text) => text.split(',').every((part) => /^amqps?:\/\//.test(part.trim()) && URL.canParse(part.trim())), {
    message: 'expected amqp:// or amqps:// URLs, separated by commas',
  });

/** Settings every service shares; each service extends this with its own. */
export const baseConfig = z.object({
  HUB_AMBIENTE: ambiente.describe('LOCALHOST, SANDBOX or PRODUCTION; PRODUCTION when unset'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('the least severe log lines written'),
  RABBITMQ_URL: developmentDefault('amqp://guest:guest@127.0.0.1:5672', amqpUrlList).describe(
    "AMQP URL of RabbitMQ, with its credentials; a cluster's nodes separated by commas",
  ),
  HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe('address the HTTP port binds to: loopback unless set (0.0.0.0 in the image, to take outside calls)'),
  SHUTDOWN_TIMEOUT: durationFromEnv('15s')
    .refine((ms) => ms > 0, 'must be above 0')
    .describe(
      "on SIGTERM, how long the process has to stop cleanly before it exits anyway (status 1); keep it under the pod's terminationGracePeriodSeconds",
    ),
});

export const identityConfig = z.object({
  IDENTITY_JWKS_URL: developmentDefault('http://127.0.0.1:8085/.well-known/jwks.json', z.string().url()).describe(
    "the identity service's public keys",
  ),
  IDENTITY_ISSUER: developmentDefault('http://127.0.0.1:8085', z.string().min(1)).describe(
    'the iss claim every identity token must carry',
  ),
  IDENTITY_AUDIENCE: z.string().min(1).default('event-hub').describe('the aud claim every identity token must carry'),
  IDENTITY_ALGORITHMS: z
    .string()
    .default('EdDSA')
    .transform((v) =>
      v
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean),
    )
    .describe('algorithms accepted on identity tokens, comma separated'),
});

/** A PostgreSQL URL; on a developer's machine the local server's database of that name. */
export const databaseUrlFromEnv = (database: string) =>
  developmentDefault(`postgresql://postgres@127.0.0.1:5432/${database}`, z.string().url());

/** Where another service answers; on a developer's machine 127.0.0.1 at its default port. */
export const serviceUrlFromEnv = (localUrl: string) => developmentDefault(localUrl, z.string().url());

/**
 * The longest path a Unix socket may have on Linux: sun_path holds 108 bytes with the closing NUL.
 * A longer one fails at listen or connect with an error that does not name the cause.
 */
export const SOCKET_PATH_MAX_BYTES = 107;

/** Why a Unix socket path cannot be used, or undefined when it can. */
export function socketPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must be an absolute path (it starts with /)';
  if (path.includes('\0')) return 'must not contain NUL';
  // A socket is a file: `/run/hub/` is a directory (listening there fails with EADDRINUSE), and in
  // the gateway's list, which drops a URL's trailing slashes, `unix:/` would be left with no path.
  if (path.endsWith('/')) return 'names a directory (it ends with /)';
  const bytes = Buffer.byteLength(path);
  if (bytes > SOCKET_PATH_MAX_BYTES)
    return `is ${bytes} bytes long; a Unix socket path holds ${SOCKET_PATH_MAX_BYTES} at most`;
  return undefined;
}

/**
 * A Unix socket the service also serves HTTP on, beside its port, for a gateway on the same host
 * (docs/decisions/unix-socket-upstreams.md); unset, none.
 */
export const socketPathFromEnv = () =>
  z
    .string()
    .optional()
    .superRefine((path, ctx) => {
      const problem = path === undefined ? undefined : socketPathProblem(path);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
