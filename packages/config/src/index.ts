import { z } from 'zod';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses the environment once against a service's schema. A wrong or missing variable stops the
 * service at start with a message naming each variable and what is wrong with it.
 */
export function loadConfig<S extends z.ZodObject>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): Readonly<z.infer<S>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze(parsed.data);
}

/** "true"/"1" are true, "false"/"0" are false; anything else is an error, never a silent false. */
export const booleanFromEnv = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

export const portFromEnv = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

export const ambiente = z.enum(['LOCALHOST', 'SANDBOX', 'PRODUCTION']).default('LOCALHOST');
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

/** Settings every service shares; each service extends this with its own. */
export const baseConfig = z.object({
  HUB_AMBIENTE: ambiente.describe('LOCALHOST, SANDBOX or PRODUCTION'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RABBITMQ_URL: z.string().url().default('amqp://guest:guest@127.0.0.1:5672').describe('AMQP URL of RabbitMQ'),
});

export const identityConfig = z.object({
  IDENTITY_JWKS_URL: z.string().url().default('http://127.0.0.1:8085/.well-known/jwks.json'),
  IDENTITY_ISSUER: z.string().min(1).default('http://127.0.0.1:8085'),
  IDENTITY_AUDIENCE: z.string().min(1).default('event-hub'),
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

export const databaseUrlFromEnv = (database: string) =>
  z.string().url().default(`postgresql://postgres@127.0.0.1:5432/${database}`);
