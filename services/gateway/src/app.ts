import { createTokenVerifier } from '@hub/auth';
import {
  type ListenOptions,
  listen,
  problemHandler,
  type RunningServer,
  requestIdWithoutContext,
  routeNotFound,
} from '@hub/http';
import type { Logger } from '@hub/log';
import express, { type Express } from 'express';
import type { GatewayConfig } from './config';
import { cors } from './edge/cors';
import { createCallerIdentifier } from './edge/caller';
import { oneHost } from './edge/one-host';
import { createRateLimiter, rateLimitPerCaller } from './edge/rate-limit';
import { securityHeaders } from './edge/security-headers';
import { healthRouter } from './health/health.routes';
import { createMetrics, hideMetrics } from './health/metrics';
import { createOpenApiSource } from './openapi/openapi.service';
import { openApiRouter } from './openapi/openapi.routes';
import { panelRouter } from './panel/panel.routes';
import { createLimits } from './proxy/limits';
import { createProxy } from './proxy/proxy';
import { upstreamOf, upstreamsFrom } from './routes';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
}

export interface GatewayApp {
  /** Serves the public port on node:http; its close lets the answers under way finish. */
  listen(port: number, host?: string, options?: ListenOptions): Promise<RunningServer>;
  /** The express app: every request of the public port. */
  app: Express;
  /** GET /metrics, for GATEWAY_METRICS_PORT only. */
  metricsApp: Express;
  /** Drops the kept-alive upstream connections. */
  close(): void;
}

/**
 * The gateway: request ids, security headers, metrics, CORS, the refusal of a request for a
 * service already at its limit, health, rate limit, then its own
 * documents and the proxy to the service owning each path. One way through for every request:
 * node:http parses it, express routes it, undici sends it on. Bodies are never parsed here; they
 * stream through. Its metrics are a separate app, for a port of their own.
 */
export function createGatewayApp({ config, logger }: GatewayDeps): GatewayApp {
  const upstreams = upstreamsFrom(config);
  const list = Object.values(upstreams);
  const metrics = createMetrics(upstreamOf, logger);
  const limits = createLimits({
    upstreams,
    maxInFlight: config.GATEWAY_MAX_IN_FLIGHT,
    targetMs: config.GATEWAY_TARGET_LATENCY,
    publicationTargetMs: config.GATEWAY_PUBLICATION_TARGET_LATENCY,
  });
  const proxy = createProxy({
    upstreams,
    bodyLimit: config.GATEWAY_BODY_LIMIT,
    timeoutMs: config.GATEWAY_UPSTREAM_TIMEOUT,
    logger,
    maxInFlight: config.GATEWAY_MAX_IN_FLIGHT,
    limits,
    trustProxy: config.GATEWAY_TRUST_PROXY,
  });
  const openapi = createOpenApiSource(
    list,
    {
      ambiente: config.HUB_AMBIENTE,
      LOCALHOST: config.GATEWAY_LOCALHOST_URL,
      SANDBOX: config.GATEWAY_SANDBOX_URL,
      PRODUCTION: config.GATEWAY_PRODUCTION_URL,
    },
    config.GATEWAY_OPENAPI_CACHE,
    logger,
  );
  const verifier = createTokenVerifier({
    jwksUrl: config.IDENTITY_JWKS_URL,
    issuer: config.IDENTITY_ISSUER,
    audience: config.IDENTITY_AUDIENCE,
    algorithms: config.IDENTITY_ALGORITHMS,
  });
  const identify = createCallerIdentifier(verifier, {
    ttlMs: config.GATEWAY_TOKEN_CACHE,
    refusedTtlMs: config.GATEWAY_REFUSED_TOKEN_CACHE,
  });
  const origins = config.CORS_ORIGINS ?? (config.HUB_AMBIENTE === 'LOCALHOST' ? ['*'] : []);
  const limiter = createRateLimiter({
    usuario: config.RATE_LIMIT_USER_PER_MINUTE,
    aplicativo: config.RATE_LIMIT_APPLICATION_PER_MINUTE,
    ip: config.RATE_LIMIT_PER_MINUTE,
  });

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.GATEWAY_TRUST_PROXY);
  // No AsyncLocalStorage in the gateway: the few request lines name their id themselves.
  app.use(requestIdWithoutContext);
  app.use(securityHeaders(config.HUB_AMBIENTE));
  app.use(metrics.record);
  app.use(cors(origins));
  app.use(oneHost);
  app.use(limits.refuseEarly());
  const rateLimit = rateLimitPerCaller(limiter, identify);
  app.use(healthRouter(list, rateLimit));
  app.use(hideMetrics);
  app.use(rateLimit);
  app.use(
    panelRouter({ ambiente: config.HUB_AMBIENTE, identityTokenUrl: new URL('/token', config.IDENTITY_JWKS_URL).href }),
  );
  app.use(openApiRouter(openapi, list.filter((u) => u.enabled).length));
  app.use(proxy.handler);
  app.use(routeNotFound);
  app.use(problemHandler(logger));
  return {
    listen: (port, host, options) => listen(app, port, host, options),
    app,
    metricsApp: metrics.app,
    close: proxy.close,
  };
}
