import { AppError } from '@hub/http';
import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';

/**
 * A fixed one-minute window per client IP (IPv6 grouped by /56, the library's default), in memory:
 * each gateway instance counts its own clients. Over the limit: 429 with Retry-After.
 */
export function rateLimitPerIp(perMinute: number): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    // draft-7 headers: draft-8's partition key costs a hash per request for little use.
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    // The gateway decides trust proxy on purpose (GATEWAY_TRUST_PROXY); the warnings add nothing.
    validate: { xForwardedForHeader: false, forwardedHeader: false, trustProxy: false },
    handler: (_req, _res, next) => {
      next(
        new AppError(
          429,
          'muitas_requisicoes',
          `more than ${perMinute} requests per minute from this address; wait for Retry-After seconds`,
        ),
      );
    },
  });
}
