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
import { createRateLimiter, rateLimitPerCaller } from './edge/rate-limit';
import { securityHeaders } from './edge/security-headers';
import { healthRouter } from './health/health.routes';
import { createMetrics, hideMetrics } from './health/metrics';
import { createOpenApiSource } from './openapi/openapi.service';
import { openApiRouter } from './openapi/openapi.routes';
import { panelRouter } from './panel/panel.routes';
import { createEntrada } from './proxy/entrada';
import { createFront } from './proxy/front';
import { createProxy } from './proxy/proxy';
import { upstreamOf, upstreamsFrom } from './routes';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
}

export interface GatewayApp {
  /**
   * Serves the public port: the raw front (proxy/entrada.ts) reads the fast path's requests off
   * the socket, and hands every other connection to node:http, whose handler is the front
   * (proxy/front.ts: the fast path for services' routes, the express app for the rest). Its close lets the
   * answers under way finish, on both.
   */
  listen(port: number, host?: string, options?: ListenOptions): Promise<RunningServer>;
  /** The express app alone (the gateway's own routes and the long way to the services). */
  app: Express;
  /** GET /metrics, for GATEWAY_METRICS_PORT only. */
  metricsApp: Express;
  /** Drops the kept-alive upstream connections. */
  close(): void;
}

/**
 * The gateway: request ids, security headers, metrics, CORS, health, rate limit, then its own documents and the proxy to
 * the service owning each path. Bodies are never parsed here; they stream through. Requests for a
 * service from a known caller skip express (proxy/front.ts). Its metrics are a separate app, for a
 * port of their own.
 */
export function createGatewayApp({ config, logger }: GatewayDeps): GatewayApp {
  const upstreams = upstreamsFrom(config);
  const list = Object.values(upstreams);
  const metrics = createMetrics(upstreamOf, logger);
  const proxy = createProxy({
    upstreams,
    bodyLimit: config.GATEWAY_BODY_LIMIT,
    timeoutMs: config.GATEWAY_UPSTREAM_TIMEOUT,
    logger,
    observe: metrics.observe,
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
  const identify = createCallerIdentifier(verifier, { ttlMs: config.GATEWAY_TOKEN_CACHE });
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
  // No AsyncLocalStorage in the gateway: on Node 20 it hooks every async resource of the process,
  // the fast path's included; the few request lines name their id themselves (docs/decisions/gateway-edge.md).
  app.use(requestIdWithoutContext);
  app.use(securityHeaders(config.HUB_AMBIENTE));
  app.use(metrics.record);
  app.use(cors(origins));
  app.use(healthRouter(list));
  app.use(hideMetrics);
  app.use(rateLimitPerCaller(limiter, identify));
  app.use(
    panelRouter({ ambiente: config.HUB_AMBIENTE, identityTokenUrl: new URL('/token', config.IDENTITY_JWKS_URL).href }),
  );
  app.use(openApiRouter(openapi, list.filter((u) => u.enabled).length));
  app.use(proxy.handler);
  app.use(routeNotFound);
  app.use(problemHandler(logger));
  const handler = createFront({ app, proxy, identify, limiter, ambiente: config.HUB_AMBIENTE, origins });
  const entrada = createEntrada({
    proxy,
    identify,
    limiter,
    ambiente: config.HUB_AMBIENTE,
    origins,
    observe: metrics.observe,
    bodyLimit: config.GATEWAY_BODY_LIMIT,
    logger,
  });
  return {
    async listen(port, host, options) {
      const running = await listen(handler, port, host, options);
      entrada.instalar(running.server, options?.requestTimeoutMs);
      return {
        ...running,
        close: async () => {
          entrada.fechar();
          await running.close();
        },
      };
    },
    app,
    metricsApp: metrics.app,
    close: proxy.close,
  };
}
