import { AppError } from '@hub/http';
import type { RequestHandler } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { IdentifyCaller } from './caller';
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

/**
 * The rate limit, keyed on the verified caller: a valid user token counts against that user's
 * budget wherever it comes from, an application token against its client_id's, and anything else
 * (no token, a malformed, forged, expired or foreign one) against the client address (IPv6 per /56),
 * so an invalid token never escapes the address budget. Every counted answer carries the IETF draft
 * headers in structured-field form (`RateLimit-Policy: "usuario";q=600;w=60`,
 * `RateLimit: "usuario";r=599;t=60`); over the budget: 429 `muitas_requisicoes` with Retry-After.
 */
export function rateLimitPerCaller(limits: RateLimits, identify: IdentifyCaller): RequestHandler {
  const windows = createFixedWindows(WINDOW_MS);
  const windowSeconds = WINDOW_MS / 1000;
  return async (req, res, next) => {
    const caller = await identify(req.get('authorization'));
    const policy: Policy = caller?.tipo ?? 'ip';
    const key = caller ? `${caller.tipo}:${caller.id}` : `ip:${ipKeyGenerator(req.ip ?? '')}`;
    const limit = limits[policy];
    const { count, resetInMs } = windows.hit(key);
    const resetSeconds = Math.ceil(resetInMs / 1000);
    res.setHeader('RateLimit-Policy', `"${policy}";q=${limit};w=${windowSeconds}`);
    res.setHeader('RateLimit', `"${policy}";r=${Math.max(0, limit - count)};t=${resetSeconds}`);
    if (count <= limit) return next();
    next(
      new AppError(
        429,
        'muitas_requisicoes',
        `more than ${limit} requests per minute ${WHO[policy]}; wait for Retry-After seconds`,
        undefined,
        { 'Retry-After': String(resetSeconds) },
      ),
    );
  };
}
