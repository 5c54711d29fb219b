import { AppError } from '@hub/http';
import type { RequestHandler } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

export interface RateLimitOptions {
  /** The policy's name in `RateLimit-Policy` and `RateLimit` ("aplicativo" is the gateway's). */
  policy: string;
  /** Requests per minute per application (by the client_id of its token). */
  perMinute: number;
  /** What is counted, for the refusal's detail ("requests", "resends"). */
  what: string;
}

const WINDOW_SECONDS = 60;

/**
 * A budget per application and minute in this instance, as the gateway keeps its own (its
 * `edge/rate-limit.ts`): a fixed window from the application's first request (rate-limiter-flexible's
 * RateLimiterMemory), keyed on the client_id of the verified token, so it runs after the route's
 * guards. Every counted answer carries the IETF draft headers in structured-field form
 * (`RateLimit-Policy: "aplicativo";q=120000;w=60`, `RateLimit: "aplicativo";r=119999;t=60`); over
 * the budget: 429 `muitas_requisicoes` with Retry-After (seconds until the window ends), nothing
 * done and the body unread. Put it ahead of a route's admission (`withRateLimit`), so a refused
 * request takes no slot.
 */
export function rateLimitPerApplication(options: RateLimitOptions): RequestHandler {
  const limiter = new RateLimiterMemory({ points: options.perMinute, duration: WINDOW_SECONDS });
  const policyHeader = `"${options.policy}";q=${options.perMinute};w=${WINDOW_SECONDS}`;
  const answer = (res: Parameters<RequestHandler>[1], state: RateLimiterRes): number => {
    const resetSeconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
    res.setHeader('RateLimit-Policy', policyHeader);
    res.setHeader('RateLimit', `"${options.policy}";r=${state.remainingPoints};t=${resetSeconds}`);
    return resetSeconds;
  };
  return (req, res, next) => {
    const clientId = req.aplicativo?.sub;
    // Only an application's token is counted; the guards refused any other before this runs.
    if (clientId === undefined) return next();
    limiter.consume(`aplicativo:${clientId}`).then(
      (state) => {
        answer(res, state);
        next();
      },
      (state: unknown) => {
        if (!(state instanceof RateLimiterRes)) return next(state);
        const retryAfter = answer(res, state);
        next(
          new AppError(
            429,
            'muitas_requisicoes',
            `more than ${options.perMinute} ${options.what} per minute for this application; wait for Retry-After seconds`,
            undefined,
            { 'Retry-After': String(retryAfter) },
          ),
        );
      },
    );
  };
}

/** The rate limit, then the admission control (when the route has one): a refused request takes no slot. */
export function withRateLimit(rateLimit: RequestHandler, admission?: RequestHandler): RequestHandler {
  if (!admission) return rateLimit;
  return (req, res, next) =>
    rateLimit(req, res, (error?: unknown) => (error ? next(error) : admission(req, res, next)));
}
