import type { RequestListener } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Ambiente } from '@hub/config';
import { REQUEST_ID_HEADER, requestIdOf } from '@hub/http';
import type { Express } from 'express';
import type { IdentifyCaller } from '../edge/caller';
import { corsHeadersFor } from '../edge/cors';
import type { RateLimiter } from '../edge/rate-limit';
import { API_POLICY, securityHeaderList } from '../edge/security-headers';
import { upstreamOf } from '../routes';
import type { GatewayProxy } from './proxy';

export interface FrontOptions {
  /** The express app: the gateway's own routes, and every request the fast path leaves to it. */
  app: Express;
  proxy: GatewayProxy;
  identify: IdentifyCaller;
  limiter: RateLimiter;
  ambiente: Ambiente;
  /** CORS_ORIGINS as the express app has them. */
  origins: readonly string[];
}

/** Paths that might resolve to /metrics, which the express app refuses (hideMetrics). */
export const METRICS = /metrics/i;
const SLASH = 47;

/**
 * The gateway's front door. Almost every request is for a service, from a caller whose token was
 * verified a moment ago: those take the fast path, plain node:http into the proxy, with what the
 * express chain would have done done inline (request id, security headers, CORS headers, the rate
 * limit's count and headers, metrics) and nothing else: no router, no middleware stack, no
 * AsyncLocalStorage, no header set one by one. Everything else goes to the express app, which
 * still does all of it the long way: the gateway's own routes (health, documents, panel), CORS
 * preflights, paths that could reach /metrics, URLs not in origin form, and requests whose caller
 * is not known yet (no token, or a token not verified in the last GATEWAY_TOKEN_CACHE: the express
 * path verifies it, and the next request of that token is fast). Both paths count in the same
 * rate-limit windows and metrics, and answer errors through the same problem handler.
 */
export function createFront(options: FrontOptions): RequestListener {
  const { app, proxy, identify, limiter } = options;
  const security = securityHeaderList(options.ambiente, API_POLICY);
  const cors = corsHeadersFor(options.origins);
  return (req, res) => {
    const url = req.url ?? '';
    if (url.charCodeAt(0) !== SLASH || req.method === 'OPTIONS') return app(req, res);
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const name = upstreamOf(path);
    if (name === undefined || METRICS.test(path)) return app(req, res);
    const headers = req.headers;
    const caller = identify.known(headers.authorization);
    if (caller === undefined) return app(req, res);

    const startedAt = performance.now();
    const requestId = requestIdOf(headers[REQUEST_ID_HEADER]);
    const counted = limiter.count(caller, undefined);
    const gateway = [
      REQUEST_ID_HEADER,
      requestId,
      ...security,
      'ratelimit-policy',
      counted.policyHeader,
      'ratelimit',
      counted.stateHeader,
    ];
    cors(headers.origin, gateway);
    proxy.forward(req, res, name, requestId, undefined, { gateway, startedAt, refusal: counted.refusal });
  };
}
