import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

interface RequestContext {
  requestId: string;
}

const context = new AsyncLocalStorage<RequestContext>();

/** Runs fn with a request id that every log line written inside it carries. */
export function withRequestContext<T>(requestId: string, fn: () => T): T {
  return context.run({ requestId }, fn);
}

export function currentRequestId(): string | undefined {
  return context.getStore()?.requestId;
}

/**
 * A JSON logger that stamps the current request id. Tokens, keys and bodies are never logged:
 * the usual carriers are redacted as a second line of defence. LOG_LEVEL is read here, not in a config
 * schema: each main.ts makes its logger before it parses the configuration, to log a refused one.
 */
export function createLogger(
  service: string,
  level = process.env.LOG_LEVEL ?? 'info',
  /** Where the lines go (stdout unless given); given, a test reads them, so they are written under jest too. */
  destination?: pino.DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    name: service,
    level: process.env.NODE_ENV === 'test' && !process.env.LOG_LEVEL && !destination ? 'silent' : level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: () => {
      const requestId = currentRequestId();
      return requestId ? { request_id: requestId } : {};
    },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'token', 'privateKey', 'password', 'dados'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * For a fault that repeats once per request or message while it lasts (the database down, a service
 * restarting): `limit(kind, write)` calls `write` for the first occurrence of a kind at once, then at
 * most once per `intervalMs`, with how many occurrences were left out since its previous line, so a
 * 30 s outage writes a few lines instead of one per request. `now` is for tests.
 */
export function createRepeatLimiter(intervalMs = 10_000, now: () => number = Date.now) {
  const kinds = new Map<string, { at: number; omitted: number }>();
  return (kind: string, write: (omitted: number) => void): void => {
    const seen = kinds.get(kind);
    const at = now();
    if (seen && at - seen.at < intervalMs) {
      seen.omitted += 1;
      return;
    }
    write(seen?.omitted ?? 0);
    kinds.set(kind, { at, omitted: 0 });
  };
}
