import { AppError } from '@hub/http';
import type { RequestHandler } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Caller, IdentifyCaller } from './caller';
import { createFixedWindows } from './fixed-windows';

/** The budgets, per minute: a user (by e-mail), an application (by client_id), an address without a valid token. */
export interface RateLimits {
  usuario: number;
  aplicativo: number;
  ip: number;
}

type Policy = keyof RateLimits;

const WINDOW_MS = 60_000;

const WHO: Record<Policy, string> = {
  usuario: 'for this user',
  aplicativo: 'for this application',
  ip: 'from this address without a valid token',
};

/** One counted request: the headers its answer carries, and the refusal when it is over the budget. */
export interface Counted {
  policyHeader: string;
  stateHeader: string;
  refusal?: AppError;
}

/** The windows and budgets, shared by the express middleware and the proxy's fast path. */
export interface RateLimiter {
  /** Counts a request of a verified caller, or (undefined) of the address `ip`. */
  count(caller: Caller | undefined, ip: string | undefined): Counted;
}

export function createRateLimiter(limits: RateLimits, now?: () => number): RateLimiter {
  const windows = createFixedWindows(WINDOW_MS, now);
  const windowSeconds = WINDOW_MS / 1000;
  // Built once: the policy header of each class never changes.
  const policies: Record<Policy, string> = {
    usuario: `"usuario";q=${limits.usuario};w=${windowSeconds}`,
    aplicativo: `"aplicativo";q=${limits.aplicativo};w=${windowSeconds}`,
    ip: `"ip";q=${limits.ip};w=${windowSeconds}`,
  };
  return {
    count(caller, ip) {
      const policy: Policy = caller?.tipo ?? 'ip';
      const key = caller ? `${caller.tipo}:${caller.id}` : `ip:${ipKeyGenerator(ip ?? '')}`;
      const limit = limits[policy];
      const { count, resetInMs } = windows.hit(key);
      const resetSeconds = Math.ceil(resetInMs / 1000);
      const counted: Counted = {
        policyHeader: policies[policy],
        stateHeader: `"${policy}";r=${Math.max(0, limit - count)};t=${resetSeconds}`,
      };
      if (count > limit)
        counted.refusal = new AppError(
          429,
          'muitas_requisicoes',
          `more than ${limit} requests per minute ${WHO[policy]}; wait for Retry-After seconds`,
          undefined,
          { 'Retry-After': String(resetSeconds) },
        );
      return counted;
    },
  };
}

/**
 * The rate limit, keyed on the verified caller: a valid user token counts against that user's
 * budget wherever it comes from, an application token against its client_id's, and anything else
 * (no token, a malformed, forged, expired or foreign one) against the client address (IPv6 per /56),
 * so an invalid token never escapes the address budget. Every counted answer carries the IETF draft
 * headers in structured-field form (`RateLimit-Policy: "usuario";q=600;w=60`,
 * `RateLimit: "usuario";r=599;t=60`); over the budget: 429 `muitas_requisicoes` with Retry-After.
 */
export function rateLimitPerCaller(limiter: RateLimiter, identify: IdentifyCaller): RequestHandler {
  return async (req, res, next) => {
    const caller = await identify(req.get('authorization'));
    const counted = limiter.count(caller, caller ? undefined : req.ip);
    res.setHeader('RateLimit-Policy', counted.policyHeader);
    res.setHeader('RateLimit', counted.stateHeader);
    next(counted.refusal);
  };
}
