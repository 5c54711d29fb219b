import {
  baseConfig,
  booleanFromEnv,
  databaseUrlFromEnv,
  durationFromEnv,
  identityConfig,
  loadConfig,
  portFromEnv,
  socketPathFromEnv,
  serviceUrlFromEnv,
} from '@hub/config';
import { z } from 'zod';
import { deliveryRetryDelaysFromEnv } from '@hub/contracts';
import { allowlistFromEnv } from '@hub/destinations';

export const hubApiConfig = baseConfig.extend(identityConfig.shape).extend({
  HUB_API_PORT: portFromEnv(8083).describe('port of hub-api'),
  HUB_API_SOCKET: socketPathFromEnv().describe(
    'a Unix socket hub-api also serves HTTP on, for a gateway on the same host (an absolute path); unset, none',
  ),
  HUB_DATABASE_URL: databaseUrlFromEnv('hub_events').describe(
    'PostgreSQL database of the hub (created and migrated at start)',
  ),
  HUB_DATABASE_READ_URL: z
    .string()
    .url()
    .optional()
    .describe(
      "a read replica of HUB_DATABASE_URL (HAProxy on Patroni's /replica, CloudNativePG's -ro) for the operators' lists and summaries that tolerate a little staleness (docs/decisions/read-replica.md); unset, those reads go to HUB_DATABASE_URL",
    ),
  ACCESS_URL: serviceUrlFromEnv('http://127.0.0.1:8081').describe('the access service, asked who a caller is'),
  HUB_SCHEMA_COMPILE_LIMIT: durationFromEnv('10s').describe(
    "how long ajv may take to compile a schema in hub-api's compilation worker threads, off the event loop: a schema being registered (POST /versao-de-esquema and its verificar-compatibilidade) or a stored version at its first use in the process; a slower one is refused with 422 esquema_invalido",
  ),
  ACCESS_CACHE_TTL: durationFromEnv('5s').describe('how long an answer of the access service is reused at most'),
  ACCESS_CACHE_STALE_IF_ERROR: durationFromEnv('60s').describe(
    "how long past ACCESS_CACHE_TTL a caller's last answer stands in while the access service cannot answer (its database failing over); a change of access announced drops it at once",
  ),
  DESTINATION_ALLOWLIST: allowlistFromEnv(
    'comma-separated CIDRs that subscriptions may reach even though they are private (SANDBOX, PRODUCTION)',
  ),
  DESTINATION_ALLOW_HTTP: booleanFromEnv(false).describe(
    'SANDBOX and PRODUCTION: accept http:// subscription URLs (a closed network where TLS is not available); otherwise a new url_de_destino must be https (422 https_obrigatorio). Subscriptions already accepted are delivered either way',
  ),
  HUB_SIGNING_KEYS_FILE: z
    .string()
    .min(1)
    .default('.data/hub/signing-keys.json')
    .describe('key file of the delivery-signing keys (mode 0600); created on first start only in LOCALHOST'),
  HUB_SIGNING_KEYS: z.string().optional().describe('the key set as JSON; when set, the key file is not used'),
  HUB_SIGNING_JWKS: z
    .string()
    .optional()
    .describe(
      'the public keys only, as a JWKS (`hub-keys jwks` prints it): hub-api serves them and reads no private key; when set, HUB_SIGNING_KEYS and the key file are not used',
    ),
  HUB_CACHE_TTL: durationFromEnv('5s').describe(
    'life of the cached subscriptions, types, versions and applications of publication: a backstop only, every write of any process drops them at once through a PostgreSQL notification',
  ),
  HUB_PUBLICACOES_EM_ANDAMENTO: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(1_000)
    .describe(
      'publications (POST /eventos, POST /evento) under way at once per instance; one more is answered 503 sobrecarregado with Retry-After: 1, unread (bounds memory and waiting under overload)',
    ),
  HUB_PUBLICACOES_TEMPO_ALVO: durationFromEnv('100ms').describe(
    'the answer time publications aim at (about what one takes when it does not wait): while they are answered slower, fewer than HUB_PUBLICACOES_EM_ANDAMENTO are let in at once (never fewer than 16) and the rest answered 503 sobrecarregado at once',
  ),
  HUB_CONSULTAS_DE_APLICATIVOS_EM_ANDAMENTO: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(200)
    .describe(
      'requests of subscribing applications (GET /entregas, GET /entregas/{id}, POST /entregas/{id}/reenviar, GET /assinaturas) under way at once per instance; one more is answered 503 sobrecarregado with Retry-After: 1, unread (a polling application cannot take every database connection)',
    ),
  HUB_PUBLICACOES_POR_MINUTO: z.coerce
    .number()
    .int()
    .min(1)
    .default(120_000)
    .describe(
      "POST /eventos per application (the token's client_id) and minute in this instance; one more is answered 429 muitas_requisicoes with Retry-After, unread. The gateway's RATE_LIMIT_APPLICATION_PER_MINUTE by default: applications may reach hub-api without the gateway (an ingress that sends /eventos here)",
    ),
  HUB_REENVIOS_POR_MINUTO: z.coerce
    .number()
    .int()
    .min(1)
    .default(600)
    .describe(
      'POST /entregas/{id}/reenviar (a subscribing application resending its own delivery) per application and minute in this instance; one more is answered 429 muitas_requisicoes with Retry-After, nothing done',
    ),
  HUB_ASSINATURAS_POR_APLICATIVO: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(100)
    .describe(
      'subscriptions (not deleted) an application may hold when it makes its own (POST /assinaturas, its token or its portal); one more is answered 429 limite_de_assinaturas. Subscriptions made in the panel count, but the panel is not bound by it',
    ),
  HUB_ALTERACOES_DE_ASSINATURAS_POR_MINUTO: z.coerce
    .number()
    .int()
    .min(1)
    .default(60)
    .describe(
      'POST, PATCH and DELETE of /assinaturas (an application changing its own subscriptions) per application and minute in this instance; one more is answered 429 muitas_requisicoes with Retry-After, nothing done',
    ),
  HUB_GATEWAY_URL: serviceUrlFromEnv('http://localhost:8080').describe(
    "the gateway's public address: a link of POST /aplicativo/{id}/portal is {this}/portal/#token={token}",
  ),
  OUTBOX_POLL_INTERVAL: durationFromEnv('1s').describe('how often the outbox relay looks without a notification'),
  OUTBOX_RETENTION: durationFromEnv('7d').describe('how long published outbox rows (delivery jobs) are kept'),
  HUB_SIGNING_KEYS_RELOAD: durationFromEnv('5s').describe(
    'how often the key file is checked for changes made by hub-keys',
  ),
  HUB_RECUSADOS_RETENCAO: durationFromEnv('30d').describe(
    'how long refused publications (GET /evento-recusado) are kept before the retention job erases them',
  ),
  HUB_RETENCAO_INTERVALO: durationFromEnv('1m').describe(
    'pause between passes of the retention job (expired events, refused events, idempotency keys, tallies)',
  ),
  HUB_REPROCESSAMENTO_LOTE: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(500)
    .describe('deliveries per batch (one transaction) of a reprocessing request'),
  HUB_REPROCESSAMENTO_INTERVALO: durationFromEnv('5s').describe(
    'how often open reprocessing requests are looked for (a new request starts at once; this resumes the ones a stopped instance left)',
  ),
  HUB_REPROCESSAMENTO_PAUSA: durationFromEnv('0ms').describe('pause between two batches of a reprocessing request'),
  REPLAY_MAX_EVENTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000_000)
    .default(1_000_000)
    .describe(
      'a replay (POST /assinatura/{id}/reproduzir, POST /assinaturas/{id}/reproduzir) whose range holds more stored events of the type and version is refused with 422 reproducao_grande_demais',
    ),
  HUB_REPRODUCAO_LOTE: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(500)
    .describe('at most this many events per batch (one transaction) of a replay: what bounds its memory'),
  HUB_REPRODUCAO_POR_SEGUNDO: z.coerce
    .number()
    .int()
    .min(0)
    .max(100_000)
    .default(200)
    .describe(
      'events a second at most per replay: each batch takes what one HUB_REPRODUCAO_PAUSA allows at this rate (at most HUB_REPRODUCAO_LOTE), so a replay never puts a burst of jobs ahead of live deliveries; 0, no rate but HUB_REPRODUCAO_LOTE',
    ),
  HUB_REPRODUCAO_EM_FILA: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(10)
    .describe(
      "a replay's next batch waits while more than this many deliveries of its last batch are still in the queue (the destination's pace)",
    ),
  HUB_REPRODUCAO_PAUSA: durationFromEnv('200ms').describe(
    'pause between two rounds of replay batches (each open replay takes at most one batch per round)',
  ),
  HUB_REPRODUCAO_INTERVALO: durationFromEnv('1s').describe(
    'how often open replays are looked for when nothing woke the runner (one waiting for its destination, one a stopped instance left)',
  ),
  HUB_REPRODUCOES_POR_MINUTO: z.coerce
    .number()
    .int()
    .min(1)
    .default(10)
    .describe(
      'POST /assinaturas/{id}/reproduzir (a subscribing application replaying to its own subscription) per application and minute in this instance; one more is answered 429 muitas_requisicoes with Retry-After, nothing done',
    ),
  DELIVERY_RETRY_DELAYS: deliveryRetryDelaysFromEnv(),
  HUB_CONCILIACAO_PARADA: durationFromEnv('5m').describe(
    'a delivery still in the queue whose job the work queue dead-lettered as poison is marked fila_de_erro by the reconciliation once it has not moved for this long',
  ),
});
export type HubApiConfig = z.infer<typeof hubApiConfig>;

export const readConfig = () => loadConfig(hubApiConfig);
