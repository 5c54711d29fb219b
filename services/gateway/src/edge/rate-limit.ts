import { type Counted, minuteBudget } from '@hub/http';
import type { RequestHandler } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Caller, IdentifyCaller } from './caller';

/** The budgets, per minute: a user (by e-mail), an application (by client_id), an address without a valid token. */
export interface RateLimits {
  usuario: number;
  aplicativo: number;
  ip: number;
}

type Policy = keyof RateLimits;

const WHO: Record<Policy, string> = {
  usuario: 'for this user',
  aplicativo: 'for this application',
  ip: 'from this address without a valid token',
};

/** The windows and budgets of this gateway instance. */
export interface RateLimiter {
  /** Counts a request of a verified caller, or (undefined) of the address `ip`. */
  count(caller: Caller | undefined, ip: string | undefined): Promise<Counted>;
}

/** A budget per minute for each class of caller, in this instance's memory (minuteBudget of @hub/http). */
export function createRateLimiter(limits: RateLimits): RateLimiter {
  const budgets = Object.fromEntries(
    (Object.keys(limits) as Policy[]).map((policy) => [
      policy,
      minuteBudget({ policy, perMinute: limits[policy], what: `requests per minute ${WHO[policy]}` }),
    ]),
  ) as Record<Policy, (key: string) => Promise<Counted>>;
  return {
    count(caller, ip) {
      const policy: Policy = caller?.tipo ?? 'ip';
      const key = caller ? `${caller.tipo}:${caller.id}` : `ip:${ipKeyGenerator(ip ?? '')}`;
      return budgets[policy](key);
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
    const counted = await limiter.count(caller, caller ? undefined : req.ip);
    res.setHeader('RateLimit-Policy', counted.policyHeader);
    res.setHeader('RateLimit', counted.stateHeader);
    next(counted.refusal);
  };
}
