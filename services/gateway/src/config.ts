import {
  baseConfig,
  developmentDefault,
  durationFromEnv,
  identityConfig,
  loadConfig,
  portFromEnv,
  socketPathProblem,
} from '@hub/config';
import { z } from 'zod';
import { parseByteSize } from './proxy/body-limit';
import { UNIX_PREFIX } from './routes';

const optionalUrl = z.preprocess((v) => (v === '' ? undefined : v), z.string().url().optional());

/** Why one instance of a service URL list cannot be used, or undefined when it can. */
function instanceProblem(entrada: string): string | undefined {
  if (entrada.startsWith(UNIX_PREFIX)) return socketPathProblem(entrada.slice(UNIX_PREFIX.length));
  if (!z.string().url().safeParse(entrada).success) return 'is not a URL';
  // undici dials http and https only: another scheme passed here, and the start then failed with "Invalid URL".
  if (!/^https?:\/\//i.test(entrada)) return 'is neither http(s):// nor unix:';
  return undefined;
}

/**
 * One service URL or several separated by commas (instances the gateway takes in turn), each
 * http(s)://host:port or unix:/absolute/path.sock (a service on this host: routes.ts's instanceOf);
 * LOCALHOST has a default.
 */
const serviceUrlsFromEnv = (localUrl: string) =>
  developmentDefault(
    localUrl,
    z.string().superRefine((lista, ctx) => {
      for (const entrada of lista.split(',').map((url) => url.trim())) {
        const problem = instanceProblem(entrada);
        if (problem)
          ctx.addIssue({
            code: 'custom',
            message: `"${entrada}" ${problem}: one URL (http://host:port or unix:/path.sock), or several separated by commas`,
          });
      }
    }),
  );

// The gateway talks HTTP only: RabbitMQ is not its business, so SANDBOX does not ask it for a URL. It
// verifies tokens (to key the rate limit on the caller), hence the identity settings.
export const gatewayConfig = baseConfig
  .omit({ RABBITMQ_URL: true })
  .extend(identityConfig.shape)
  .extend({
    GATEWAY_PORT: portFromEnv(8080).describe('public port: every route, the panel, /openapi.json and /docs'),
    GATEWAY_METRICS_PORT: portFromEnv(9080).describe('port of GET /metrics (Prometheus); never served on GATEWAY_PORT'),
    GATEWAY_METRICS_HOST: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe('address the metrics port binds to; loopback unless a scraper on another host must reach it'),
    ACCESS_URL: serviceUrlsFromEnv('http://127.0.0.1:8081').describe(
      'access service (/auth, /perfil-de-acesso, /colaborador); several instances: their URLs separated by commas; unix:/path.sock for one on this host serving that socket',
    ),
    FUNCTION_URL: serviceUrlsFromEnv('http://127.0.0.1:8082').describe(
      'function service (/funcao); several instances: their URLs separated by commas; unix:/path.sock for one on this host serving that socket',
    ),
    HUB_API_URL: serviceUrlsFromEnv('http://127.0.0.1:8083').describe(
      'hub-api service (events, subscriptions, …); several instances: their URLs separated by commas; unix:/path.sock for one on this host serving that socket',
    ),
    GATEWAY_UPSTREAMS: z
      .string()
      .default('access,function,hub-api')
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .describe('upstreams that are deployed; routes of the others answer 502 and readiness ignores them'),
    CORS_ORIGINS: z
      .string()
      .optional()
      .transform((v) =>
        v === undefined
          ? undefined
          : v
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
      )
      .describe('allowed browser origins, comma separated, or *; default * in LOCALHOST and none elsewhere'),
    GATEWAY_BODY_LIMIT: z
      .string()
      .default('1mb')
      .transform((text, ctx) => {
        const bytes = parseByteSize(text);
        if (bytes === undefined) {
          ctx.addIssue({ code: 'custom', message: `"${text}" is not a size like 512kb or 1mb` });
          return z.NEVER;
        }
        return bytes;
      })
      .describe('largest request body passed to a service'),
    RATE_LIMIT_PER_MINUTE: z.coerce
      .number()
      .int()
      .min(1)
      .default(300)
      .describe('requests per minute per client IP (IPv6 per /56) of requests without a valid token'),
    RATE_LIMIT_USER_PER_MINUTE: z.coerce
      .number()
      .int()
      .min(1)
      .default(600)
      .describe('requests per minute per user (a valid "usuario" token, by e-mail), from any address'),
    RATE_LIMIT_APPLICATION_PER_MINUTE: z.coerce
      .number()
      .int()
      .min(1)
      .default(120_000)
      .describe('requests per minute per application (a valid "aplicativo" token, by client_id); twice 1,000 events/s'),
    GATEWAY_TOKEN_CACHE: durationFromEnv('1m').describe(
      'how long the rate limit remembers a verified token (never past its expiry), so each request is not verified again',
    ),
    GATEWAY_REFUSED_TOKEN_CACHE: durationFromEnv('5s').describe(
      'how long a token that failed verification is remembered as naming nobody, so a flood of one forged token costs one verification',
    ),
    GATEWAY_MAX_IN_FLIGHT: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(256)
      .describe(
        'requests under way at once to one service instance (its kept-alive connections); one more is answered 503 sobrecarregado at once',
      ),
    GATEWAY_TARGET_LATENCY: durationFromEnv('1s').describe(
      'the answer time of a service the gateway aims at: while it answers slower, fewer than GATEWAY_MAX_IN_FLIGHT requests go to it at once and the rest are answered 503 sobrecarregado at once',
    ),
    GATEWAY_PUBLICATION_TARGET_LATENCY: durationFromEnv('100ms').describe(
      'the answer time publications (POST /eventos) aim at, under a limit of their own beside the other requests to hub-api: while they are answered slower, fewer go at once (never fewer than 16 per instance) and the rest are answered 503 sobrecarregado at once',
    ),
    GATEWAY_TRUST_PROXY: z
      .string()
      .default('false')
      .transform((v): boolean | number | string =>
        v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v,
      )
      .describe(
        'Express "trust proxy": false (clients reach the gateway directly: their X-Forwarded-* are replaced by what the gateway saw), or the hops or subnets of the proxies in front whose X-Forwarded-* are kept',
      ),
    GATEWAY_UPSTREAM_TIMEOUT: durationFromEnv('30s').describe('an upstream silent for this long is a 504'),
    GATEWAY_OPENAPI_CACHE: durationFromEnv('10s').describe('how long the merged OpenAPI document is reused'),
    GATEWAY_LOCALHOST_URL: z
      .string()
      .url()
      .default('http://127.0.0.1:8080')
      .describe('the LOCALHOST server of /openapi.json: where the gateway listens unless HOST says otherwise'),
    GATEWAY_SANDBOX_URL: optionalUrl.describe('the SANDBOX server of /openapi.json (left out when unset)'),
    GATEWAY_PRODUCTION_URL: optionalUrl.describe('the PRODUCTION server of /openapi.json (left out when unset)'),
  });
export type GatewayConfig = z.infer<typeof gatewayConfig>;

export const readConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(gatewayConfig, env);
