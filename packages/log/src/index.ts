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
 * the usual carriers are redacted as a second line of defence.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level: process.env.NODE_ENV === 'test' && !process.env.LOG_LEVEL ? 'silent' : level,
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
  });
}
