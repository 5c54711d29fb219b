import { baseConfig, databaseUrlFromEnv, durationFromEnv, loadConfig, portFromEnv } from '@hub/config';
import { deliveryRetryDelaysFromEnv } from '@hub/contracts';
import { allowlistFromEnv } from '@hub/destinations';
import { z } from 'zod';

export const deliveryWorkerConfig = baseConfig
  .extend({
    DELIVERY_WORKER_PORT: portFromEnv(8084).describe('port of /saude, /saude/prontidao and /metrics'),
    HUB_DATABASE_URL: databaseUrlFromEnv('hub_events').describe(
      'PostgreSQL database of the hub, shared with hub-api (migrated at start under an advisory lock)',
    ),
    DELIVERY_RETRY_DELAYS: deliveryRetryDelaysFromEnv(),
    DELIVERY_SCHEMA_BASE_URL: z
      .url()
      .default('http://localhost:8080')
      .describe("the gateway's public address: a CloudEvents delivery's dataschema is {this}/esquema/{nome}/{versao}"),
    DELIVERY_TIMEOUT: durationFromEnv('10s').describe('how long one POST may take, answer included'),
    DELIVERY_PREFETCH: z.coerce
      .number()
      .int()
      .min(1)
      .max(5000)
      .default(400)
      .describe('jobs taken from the work queue at once (unacknowledged)'),
    DELIVERY_CONCURRENCY_PER_DESTINATION: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(100)
      .describe(
        "the most POSTs one worker process makes at once to one origin (its keep-alive sockets), whatever the destination's concorrencia_maxima allows",
      ),
    DELIVERY_DESTINOS_REFRESH: durationFromEnv('2s').describe(
      'how often the destinations (limits, pause) and the number of workers are read, and the per-minute figures written',
    ),
    DELIVERY_DESTINATION_WAIT: durationFromEnv('1s').describe(
      'how long a job may wait in memory for a turn at a destination at its limit before it is deferred to the shortest delay queue',
    ),
    DELIVERY_RECORD_SPACING: durationFromEnv('20ms').describe(
      "least time between the starts of two statements recording attempts (one at a time): below saturation the attempts of that time share one statement, so CPU falls with the rate; an attempt of an ordered subscription, or taken from an isolated destination's own queue, is recorded at once (0ms: back to back)",
    ),
    DELIVERY_STOP_TIMEOUT: durationFromEnv('8s').describe(
      'on SIGTERM, how long attempts under way may finish before the rest go back to the queue; below SHUTDOWN_TIMEOUT, which also covers closing the connections',
    ),
    DELIVERY_SWEEP_INTERVAL: durationFromEnv('30s').describe('pause between passes of the sweeper'),
    DELIVERY_SWEEP_AGE: durationFromEnv('2m').describe(
      "how far past the latest moment its job could be back (the end of its delay step, or of its claim's lease) a delivery is before the sweeper enqueues its job again",
    ),
    DELIVERY_ISOLATION_DEFERRALS: z.coerce
      .number()
      .int()
      .min(0)
      .default(20)
      .describe(
        'jobs of one destination deferred at its limit within one DELIVERY_DESTINOS_REFRESH after which it gets a queue of its own (0: never for that reason)',
      ),
    DELIVERY_ISOLATION_BACKLOG: z.coerce
      .number()
      .int()
      .min(0)
      .default(2000)
      .describe(
        'depth of the work queue from which a destination taking at least half of the jobs a worker takes from it gets a queue of its own (0: never for that reason)',
      ),
    DELIVERY_ISOLATION_QUIET: durationFromEnv('60s').describe(
      'how long the queue of an isolated destination, not held back, stays empty before the destination goes back to the work queue',
    ),
    DELIVERY_ISOLATION_GRACE: durationFromEnv('15s').describe(
      "how long a destination going back to the work queue is still consumed from its own queue (jobs hub-api's relay routed there before it knew); above HUB_CACHE_TTL",
    ),
    DELIVERY_ISOLATION_MAX: z.coerce
      .number()
      .int()
      .min(0)
      .max(2000)
      .default(200)
      .describe(
        'the most destinations with a queue of their own at once (each a quorum queue and a consumer per worker); past it a held destination waits in the delay queues and a backlog stays in the shared queue (0: no isolation)',
      ),
    DELIVERY_POISON_CLAIMS: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(3)
      .describe(
        'claims of a delivery in a row that ended with no attempt recorded (their worker died) after which its job is poison: the next claim puts it in the error queue',
      ),
    DELIVERY_CIRCUIT_MIN_FAILURES: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000_000)
      .default(20)
      .describe(
        "failed attempts to one origin within DELIVERY_CIRCUIT_WINDOW (or within its last sixth alone), over every worker together (each process takes its share, as for a destination's limits), before the origin's circuit opens and its deliveries wait; 0: circuits never open",
      ),
    DELIVERY_CIRCUIT_FAILURE_SHARE: z.coerce
      .number()
      .gt(0)
      .max(1)
      .default(0.5)
      .describe(
        "the least share of the window's attempts to the origin that failed (0 to 1) for its circuit to open, with DELIVERY_CIRCUIT_MIN_FAILURES; its last sixth is also counted alone, so an origin that answered for a whole window and then goes down is cut off in seconds",
      ),
    DELIVERY_CIRCUIT_WINDOW: durationFromEnv('60s').describe(
      "the sliding window over which an origin's attempts and failures are counted for its circuit (and, alone, its last sixth)",
    ),
    DELIVERY_CIRCUIT_OPEN_FOR: durationFromEnv('30s').describe(
      "how long an origin's circuit stays open the first time before one probe is attempted; each opening in a row (the probe failed) lasts twice the one before",
    ),
    DELIVERY_CIRCUIT_OPEN_MAX: durationFromEnv('10m').describe(
      'the longest an opening of a circuit lasts, however many probes failed in a row',
    ),
    DESTINATION_ALLOWLIST: allowlistFromEnv(
      'comma-separated CIDRs deliveries may reach even though they are private (SANDBOX, PRODUCTION)',
    ),
    HUB_SIGNING_KEYS_FILE: z
      .string()
      .min(1)
      .default('.data/hub/signing-keys.json')
      .describe('key file of the delivery-signing keys, the one hub-api publishes; the worker never creates it'),
    HUB_SIGNING_KEYS: z.string().optional().describe('the key set as JSON; when set, the key file is not used'),
    HUB_API_URL: z
      .string()
      .url()
      .optional()
      .describe(
        'hub-api, whose /.well-known/jwks.json must list every active signing key of the worker for it to be ready (unset: not checked)',
      ),
    DELIVERY_WORKER_TOPOLOGY_PREFIX: z
      .string()
      .regex(/^[\w.-]+$/)
      .optional()
      .describe('tests and benchmarks only: every exchange and queue of the delivery topology under this prefix'),
    HUB_SIGNING_KEYS_RELOAD: durationFromEnv('5s').describe(
      'how often the key file is checked for changes made by hub-keys',
    ),
  })
  .superRefine((config, ctx) => {
    if (config.DELIVERY_CIRCUIT_OPEN_MAX < config.DELIVERY_CIRCUIT_OPEN_FOR)
      ctx.addIssue({
        code: 'custom',
        path: ['DELIVERY_CIRCUIT_OPEN_MAX'],
        message: `must not be below DELIVERY_CIRCUIT_OPEN_FOR (${config.DELIVERY_CIRCUIT_OPEN_FOR} ms)`,
      });
    // The attempts' drain is only the first part of the stop: past SHUTDOWN_TIMEOUT the process exits
    // anyway, so a drain as long would always end in a forced exit with the broker still open.
    if (config.DELIVERY_STOP_TIMEOUT >= config.SHUTDOWN_TIMEOUT)
      ctx.addIssue({
        code: 'custom',
        path: ['DELIVERY_STOP_TIMEOUT'],
        message: `must be below SHUTDOWN_TIMEOUT (${config.SHUTDOWN_TIMEOUT} ms), the hard limit of the whole stop`,
      });
    // Every attempt's ack waits up to this long: more than a second holds the prefetched jobs, and a
    // stop's drain, for nothing.
    if (config.DELIVERY_RECORD_SPACING > 1_000)
      ctx.addIssue({ code: 'custom', path: ['DELIVERY_RECORD_SPACING'], message: 'must be 1s at most' });
  });
export type DeliveryWorkerConfig = z.infer<typeof deliveryWorkerConfig>;

export const readConfig = () => loadConfig(deliveryWorkerConfig);
