import type { RequestHandler } from 'express';

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const DEFAULT_HEADERS = 'authorization, content-type, idempotency-key, x-request-id';
const EXPOSED_HEADERS = 'x-request-id, retry-after, ratelimit, ratelimit-policy, location';

/**
 * CORS for browser clients (the panel). Tokens travel in the Authorization header, never in
 * cookies, so credentials are not allowed and "*" is safe for LOCALHOST.
 * Preflights are answered here and never reach a service.
 */
export function cors(origins: readonly string[]): RequestHandler {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return (req, res, next) => {
    const origin = req.get('origin');
    if (!origin || origins.length === 0) return next();
    if (!any) res.vary('Origin');
    const permitted = any || allowed.has(origin);
    if (permitted) {
      res.setHeader('access-control-allow-origin', any ? '*' : origin);
      res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    }
    const preflight = req.method === 'OPTIONS' && req.get('access-control-request-method') !== undefined;
    if (!preflight) return next();
    if (permitted) {
      res.setHeader('access-control-allow-methods', ALLOWED_METHODS);
      res.setHeader('access-control-allow-headers', req.get('access-control-request-headers') ?? DEFAULT_HEADERS);
      res.setHeader('access-control-max-age', '600');
      if (!any) res.vary('Access-Control-Request-Headers');
    }
    res.status(204).end();
  };
}
