import { Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { AppError } from '@hub/http';
import { createRepeatLimiter, type Logger } from '@hub/log';
import type { RequestHandler } from 'express';
import httpProxy from 'http-proxy';
import { type Upstream, type UpstreamName, upstreamOf } from '../routes';
import { bodyTooLarge, declaredLength, discardRest, isChunked, readChunkedBody } from './body-limit';

export interface ProxyOptions {
  upstreams: Record<UpstreamName, Upstream>;
  bodyLimit: number;
  timeoutMs: number;
  logger: Logger;
}

const UPSTREAM_TIMEOUT = 'UPSTREAM_TIMEOUT';

/** Seconds a client is told to wait when a service is not answering (`pnpm start` or Kubernetes restarts it in a few). */
export const SERVICO_RETRY_AFTER_S = 2;

/**
 * A service that refused the connection or failed before its answer started (restarting, killed,
 * overloaded): 503 with Retry-After, as for a database outage, so a client waits and sends again
 * (publishers with their Idempotency-Key: a request the service had committed answers the first
 * event). A 502 said "broken" where the fault is temporary, and carried no Retry-After.
 */
export const serviceUnavailable = (name: string) =>
  new AppError(
    503,
    'servico_indisponivel',
    `the ${name} service is not answering; send the request again after Retry-After`,
    undefined,
    {
      'Retry-After': String(SERVICO_RETRY_AFTER_S),
    },
  );

/** A service not deployed here (GATEWAY_UPSTREAMS): a configuration, not an outage; waiting does not help. */
export const serviceNotDeployed = (name: string) =>
  new AppError(502, 'servico_indisponivel', `the ${name} service is not deployed behind this gateway`);

/**
 * A service that took too long: the request may or may not have been done, so the answer says when to
 * try again (publishers with their Idempotency-Key get the first event if it was).
 */
const upstreamTimeout = (name: string) =>
  new AppError(
    504,
    'tempo_esgotado',
    `the ${name} service did not answer in time; send the request again after Retry-After`,
    undefined,
    { 'Retry-After': String(SERVICO_RETRY_AFTER_S) },
  );

/**
 * Forwards a request to the service that owns its path, streaming both ways over kept-alive
 * connections. Bodies over the limit are refused here and never reach the service.
 */
export function createProxy(options: ProxyOptions): { handler: RequestHandler; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 64, scheduling: 'lifo' });
  const proxy = httpProxy.createProxyServer({ agent, xfwd: true, ws: false });
  const limit = createRepeatLimiter();

  proxy.on('proxyReq', (proxyReq, _req, res: ServerResponse) => {
    proxyReq.setTimeout(options.timeoutMs, () => {
      proxyReq.destroy(Object.assign(new Error('the upstream did not answer in time'), { code: UPSTREAM_TIMEOUT }));
    });
    // A client that goes away mid-response must not leave the upstream request hanging.
    res.once('close', () => {
      if (!res.writableFinished) proxyReq.destroy();
    });
  });
  // An upstream that dies mid-response: cut the client's connection too, so it sees the failure
  // instead of waiting for bytes that will never come (the status line is already sent).
  proxy.on('proxyRes', (proxyRes, _req, res: ServerResponse) => {
    proxyRes.once('close', () => {
      if (!proxyRes.complete) res.destroy();
    });
  });
  proxy.on('econnreset', () => undefined);

  /**
   * To the next instance of the upstream. A refused connection (an instance down or restarting)
   * is tried on the following instance, once per instance, when nothing of the request was
   * consumed: no body, or a body read here already.
   */
  const forward = (
    upstream: Upstream,
    req: IncomingMessage,
    res: ServerResponse,
    next: (error?: unknown) => void,
    buffer?: Buffer,
    restantes = upstream.urls.length - 1,
  ) => {
    const target = upstream.url;
    proxy.web(req, res, { target, ...(buffer ? { buffer: Readable.from([buffer]) } : {}) }, (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      const declarado = declaredLength(req);
      const semCorpo = buffer !== undefined || declarado === 0 || (declarado === undefined && !isChunked(req));
      if (code === 'ECONNREFUSED' && !res.headersSent && restantes > 0 && semCorpo) {
        options.logger.warn(
          { upstream: upstream.name, code },
          'upstream instance refused the connection; trying the next',
        );
        forward(upstream, req, res, next, buffer, restantes - 1);
        return;
      }
      if (res.headersSent) {
        options.logger.warn({ upstream: upstream.name, code }, 'upstream failed after the response started');
        res.destroy();
        return;
      }
      // Every request meets it while the service is away: one line per 10 s and cause, with the count.
      limit(`${upstream.name} ${code}`, (omitidas) =>
        options.logger.warn(
          { upstream: upstream.name, code, reason: (error as Error).message, ...(omitidas ? { omitidas } : {}) },
          'upstream request failed',
        ),
      );
      next(code === UPSTREAM_TIMEOUT ? upstreamTimeout(upstream.name) : serviceUnavailable(upstream.name));
    });
  };

  const handler: RequestHandler = (req, res, next) => {
    const name = upstreamOf(req.path);
    if (!name) return next();
    const upstream = options.upstreams[name];
    if (!upstream.enabled) return next(serviceNotDeployed(name));

    // Node already answered "100 Continue" to the client; asking the service again only delays it
    // (and http-proxy skips its proxyReq hook, where the timeout is set, for such requests).
    delete req.headers.expect;
    const declared = declaredLength(req);
    if (declared !== undefined && declared > options.bodyLimit) {
      if (declared > options.bodyLimit * 4) res.setHeader('connection', 'close');
      else discardRest(req, options.bodyLimit);
      return next(bodyTooLarge(options.bodyLimit));
    }
    if (!isChunked(req)) return forward(upstream, req, res, next);

    readChunkedBody(req, options.bodyLimit).then(
      (body) => {
        if (body === undefined) {
          discardRest(req, options.bodyLimit, options.bodyLimit);
          return next(bodyTooLarge(options.bodyLimit));
        }
        delete req.headers['transfer-encoding'];
        req.headers['content-length'] = String(body.length);
        forward(upstream, req, res, next, body);
      },
      () => res.destroy(),
    );
  };

  return {
    handler,
    close: () => {
      proxy.close();
      agent.destroy();
    },
  };
}
