import { AppError } from '@hub/http';
import type { RequestHandler } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Caller, IdentifyCaller } from './caller';

/** The budgets, per minute: a user (by e-mail), an application (by client_id), an address without a valid token. */
export interface RateLimits {
  usuario: number;
  aplicativo: number;
  ip: number;
}

type Policy = keyof RateLimits;

const WINDOW_SECONDS = 60;

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

/** The windows and budgets of this gateway instance. */
export interface RateLimiter {
  /** Counts a request of a verified caller, or (undefined) of the address `ip`. */
  count(caller: Caller | undefined, ip: string | undefined): Promise<Counted>;
}

/**
 * A fixed window per caller from its first request, in this instance's memory: rate-limiter-flexible's
 * RateLimiterMemory, one per class of caller (as hub-api's budgets per application use it).
 */
export function createRateLimiter(limits: RateLimits): RateLimiter {
  const limiters = Object.fromEntries(
    (Object.keys(limits) as Policy[]).map((policy) => [
      policy,
      new RateLimiterMemory({ points: limits[policy], duration: WINDOW_SECONDS }),
    ]),
  ) as Record<Policy, RateLimiterMemory>;
  // Built once: the policy header of each class never changes.
  const policies: Record<Policy, string> = {
    usuario: `"usuario";q=${limits.usuario};w=${WINDOW_SECONDS}`,
    aplicativo: `"aplicativo";q=${limits.aplicativo};w=${WINDOW_SECONDS}`,
    ip: `"ip";q=${limits.ip};w=${WINDOW_SECONDS}`,
  };
  return {
    async count(caller, ip) {
      const policy: Policy = caller?.tipo ?? 'ip';
      const key = caller ? `${caller.tipo}:${caller.id}` : `ip:${ipKeyGenerator(ip ?? '')}`;
      const limit = limits[policy];
      let state: RateLimiterRes;
      let over = false;
      try {
        state = await limiters[policy].consume(key);
      } catch (refused) {
        if (!(refused instanceof RateLimiterRes)) throw refused;
        state = refused;
        over = true;
      }
      const resetSeconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
      const counted: Counted = {
        policyHeader: policies[policy],
        stateHeader: `"${policy}";r=${state.remainingPoints};t=${resetSeconds}`,
      };
      if (over)
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
    const counted = await limiter.count(caller, caller ? undefined : req.ip);
    res.setHeader('RateLimit-Policy', counted.policyHeader);
    res.setHeader('RateLimit', counted.stateHeader);
    next(counted.refusal);
  };
}
