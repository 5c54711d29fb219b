import { minuteBudget } from '@hub/http';
import type { RequestHandler } from 'express';

export interface RateLimitOptions {
  /** The policy's name in `RateLimit-Policy` and `RateLimit` ("aplicativo" is the gateway's). */
  policy: string;
  /** Requests per minute per application (by the client_id of its token). */
  perMinute: number;
  /** What is counted, for the refusal's detail ("requests", "resends"). */
  what: string;
}

/**
 * A budget per application and minute in this instance, as the gateway keeps its own (its
 * `edge/rate-limit.ts`; both count with minuteBudget of @hub/http), keyed on the client_id of the
 * verified token, so it runs after the route's guards. Over the budget: 429 `muitas_requisicoes`
 * with Retry-After, nothing done and the body unread. Put it ahead of a route's admission
 * (`withRateLimit`), so a refused request takes no slot.
 */
export function rateLimitPerApplication(options: RateLimitOptions): RequestHandler {
  const budget = minuteBudget({
    policy: options.policy,
    perMinute: options.perMinute,
    what: `${options.what} per minute for this application`,
  });
  return (req, res, next) => {
    const clientId = req.aplicativo?.sub;
    // Only an application's token is counted; the guards refused any other before this runs.
    if (clientId === undefined) return next();
    budget(`aplicativo:${clientId}`).then((counted) => {
      res.setHeader('RateLimit-Policy', counted.policyHeader);
      res.setHeader('RateLimit', counted.stateHeader);
      next(counted.refusal);
    }, next);
  };
}

/** The rate limit, then the admission control (when the route has one): a refused request takes no slot. */
export function withRateLimit(rateLimit: RequestHandler, admission?: RequestHandler): RequestHandler {
  if (!admission) return rateLimit;
  return (req, res, next) =>
    rateLimit(req, res, (error?: unknown) => (error ? next(error) : admission(req, res, next)));
}
