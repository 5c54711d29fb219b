import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import { AppError, problemHandler, REQUEST_ID_HEADER } from '@hub/http';
import { createRepeatLimiter, type Logger } from '@hub/log';
import express, { type RequestHandler } from 'express';
import type { ObserveRequest } from '../health/metrics';
import { type Upstream, type UpstreamName, upstreamOf } from '../routes';
import { bodyTooLarge, declaredLength, discardRest, isChunked, readChunkedBody } from './body-limit';
import { type GatewayHeaders, requestHeadersFor, setGatewayHeaders, writeUpstreamHead } from './headers';

export interface ProxyOptions {
  upstreams: Record<UpstreamName, Upstream>;
  bodyLimit: number;
  timeoutMs: number;
  logger: Logger;
  /** Where the fast path's requests are counted (the express path counts its own). */
  observe: ObserveRequest;
}

const UPSTREAM_TIMEOUT = 'UPSTREAM_TIMEOUT';

/** Seconds a client is told to wait when a service is not answering (`pnpm start` or Kubernetes restarts it in a few). */
export const SERVICO_RETRY_AFTER_S = 2;

/**
 * Connections kept to each service instance: enough for every request in flight at the load the
 * platform takes (hub-api admits 1,000 publications at once; the benchmarks use 50 connections),
 * few enough that a stuck service cannot make the gateway open sockets without end. Idle ones are
 * kept (up to the same number) so a burst does not reconnect, and closed after FREE_SOCKET_MS,
 * well before a service's own keep-alive timeout (65 s) could close one under a new request.
 */
export const UPSTREAM_SOCKETS = 256;
const FREE_SOCKET_MS = 30_000;

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

/** Where one instance is, parsed once. */
interface Target {
  host: string;
  port: number;
  /** A path the instance's URL carries, put before the request's ('' for an origin). */
  prefix: string;
  request: typeof httpRequest;
  agent: HttpAgent;
}

/** The fast path's part of a request: the gateway's answer headers, when it arrived (metrics), a refusal. */
export interface FastPath {
  gateway: GatewayHeaders;
  startedAt: number;
  /** The rate limit's 429, answered instead of forwarding. */
  refusal: AppError | undefined;
}

/** One request on its way through the gateway. Listeners find it on the emitters (no closure each). */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  upstream: Upstream;
  requestId: string;
  /** The express path's `next`; undefined on the fast path, whose errors the proxy answers itself. */
  next: ((error?: unknown) => void) | undefined;
  fast: FastPath | undefined;
  /** The request's headers for the service, built once for every attempt. */
  headers: string[];
  /** A chunked body read whole here; undefined when the body streams (or there is none). */
  body: Buffer | undefined;
  /** Nothing of the request is consumed by sending it: no body, or one read here. */
  replayable: boolean;
  attemptsLeft: number;
  upstreamReq: ClientRequest | undefined;
  upstreamRes: IncomingMessage | undefined;
  clientGone: boolean;
}

const EXCHANGE = Symbol('gateway exchange');
const FAILURE = Symbol('gateway failure');
type Carrier = { [EXCHANGE]?: Exchange };
const exchangeOf = (emitter: unknown) => (emitter as Carrier)[EXCHANGE]!;

export interface GatewayProxy {
  /**
   * Sends the request to the service `name` and its answer back. On the express path `next`
   * receives a failure to answer; on the fast path (`fast`) the proxy answers it itself.
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    name: UpstreamName,
    requestId: string,
    next: ((error?: unknown) => void) | undefined,
    fast: FastPath | undefined,
  ): void;
  /** The proxy on the express app, for the requests that go that way (see front.ts). */
  handler: RequestHandler;
  /** Drops the kept-alive upstream connections. */
  close(): void;
}

/**
 * Forwards a request to the service that owns its path with `http.request` on kept-alive
 * connections, streaming both bodies. Bodies over the limit are refused here and never reach the
 * service. A client that goes away destroys the upstream request, so its socket is not left
 * waiting for an answer nobody reads; a service that dies mid-answer cuts the client's connection.
 */
export function createProxy(options: ProxyOptions): GatewayProxy {
  const agentOptions = {
    keepAlive: true,
    maxSockets: UPSTREAM_SOCKETS,
    maxFreeSockets: UPSTREAM_SOCKETS,
    timeout: FREE_SOCKET_MS,
    scheduling: 'lifo' as const,
  };
  const httpAgent = new HttpAgent(agentOptions);
  const httpsAgent = new HttpsAgent(agentOptions);
  const targets = new Map<string, Target>();
  for (const upstream of Object.values(options.upstreams))
    for (const url of upstream.urls) {
      const parsed = new URL(url);
      const https = parsed.protocol === 'https:';
      targets.set(url, {
        host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: Number(parsed.port) || (https ? 443 : 80),
        prefix: parsed.pathname === '/' ? '' : parsed.pathname,
        request: https ? httpsRequest : httpRequest,
        agent: https ? httpsAgent : httpAgent,
      });
    }
  const limit = createRepeatLimiter();
  const { logger, bodyLimit, timeoutMs, observe } = options;

  // Errors of the fast path go through the one problem handler, like every other answer's.
  const errorApp = express();
  errorApp.disable('x-powered-by');
  errorApp.disable('etag');
  errorApp.use((req, _res, next) => next((req as { [FAILURE]?: unknown })[FAILURE]));
  errorApp.use(problemHandler(logger));

  const fail = (ex: Exchange, error: AppError) => {
    if (ex.next) return ex.next(error);
    setGatewayHeaders(ex.res, ex.fast!.gateway);
    (ex.req as { [FAILURE]?: unknown })[FAILURE] = error;
    ex.req.headers[REQUEST_ID_HEADER] = ex.requestId;
    errorApp(ex.req, ex.res);
  };

  function attempt(ex: Exchange): void {
    const target = targets.get(ex.upstream.url)!;
    const out = target.request({
      host: target.host,
      port: target.port,
      method: ex.req.method,
      path: target.prefix + ex.req.url,
      headers: ex.headers,
      agent: target.agent,
      timeout: timeoutMs,
    });
    (out as Carrier)[EXCHANGE] = ex;
    ex.upstreamReq = out;
    out.on('response', onUpstreamResponse);
    out.on('error', onUpstreamError);
    out.on('timeout', onUpstreamTimeout);
    if (ex.body !== undefined) out.end(ex.body);
    else if (ex.replayable) out.end();
    else {
      ex.req.on('data', onClientData);
      ex.req.on('end', onClientEnd);
    }
  }

  function onClientData(this: IncomingMessage, chunk: Buffer) {
    const out = exchangeOf(this).upstreamReq!;
    if (!out.write(chunk)) {
      this.pause();
      out.once('drain', onUpstreamDrain);
    }
  }
  function onUpstreamDrain(this: ClientRequest) {
    exchangeOf(this).req.resume();
  }
  function onClientEnd(this: IncomingMessage) {
    exchangeOf(this).upstreamReq!.end();
  }

  function onUpstreamTimeout(this: ClientRequest) {
    this.destroy(Object.assign(new Error('the upstream did not answer in time'), { code: UPSTREAM_TIMEOUT }));
  }

  function onUpstreamResponse(this: ClientRequest, answer: IncomingMessage) {
    const ex = exchangeOf(this);
    if (ex.clientGone) {
      this.destroy();
      return;
    }
    (answer as Carrier)[EXCHANGE] = ex;
    ex.upstreamRes = answer;
    writeUpstreamHead(ex.res, answer, ex.fast?.gateway);
    answer.on('data', onUpstreamData);
    answer.on('end', onUpstreamEnd);
    // A service that dies mid-answer: cut the client's connection too, so it sees the failure
    // instead of waiting for bytes that will never come (the status line is already sent).
    answer.on('close', onUpstreamClose);
  }

  function onUpstreamData(this: IncomingMessage, chunk: Buffer) {
    const res = exchangeOf(this).res;
    if (!res.write(chunk)) {
      this.pause();
      res.once('drain', onClientDrain);
    }
  }
  function onClientDrain(this: ServerResponse) {
    exchangeOf(this).upstreamRes?.resume();
  }
  function onUpstreamEnd(this: IncomingMessage) {
    const ex = exchangeOf(this);
    ex.res.end();
    // The service answered before the body was all here (a 401 before reading it, a 503 of its
    // admission): the rest has nowhere to go, and the upstream connection is let go now rather than
    // held while a slow client keeps sending (the client's own connection is drained, then cut: listen()).
    if (!ex.req.complete && ex.upstreamReq) {
      ex.req.off('data', onClientData);
      ex.req.off('end', onClientEnd);
      ex.req.resume();
      const out = ex.upstreamReq;
      ex.upstreamReq = undefined;
      out.destroy();
    }
  }
  function onUpstreamClose(this: IncomingMessage) {
    if (!this.complete) exchangeOf(this).res.destroy();
  }

  /** The client went away before its answer was written: the upstream request goes too, freeing its socket. */
  function onClientClose(this: ServerResponse) {
    if (this.writableFinished) return;
    const ex = exchangeOf(this);
    ex.clientGone = true;
    ex.upstreamReq?.destroy();
  }

  function onUpstreamError(this: ClientRequest, error: NodeJS.ErrnoException) {
    const ex = exchangeOf(this);
    if (ex.upstreamReq !== this || ex.clientGone) return;
    const { res, upstream } = ex;
    const code = error.code;
    // A refused connection (an instance down or restarting) is tried on the next instance, once
    // per instance, when nothing of the request was consumed.
    if (code === 'ECONNREFUSED' && !res.headersSent && ex.attemptsLeft > 0 && ex.replayable) {
      logger.warn({ upstream: upstream.name, code }, 'upstream instance refused the connection; trying the next');
      ex.attemptsLeft -= 1;
      attempt(ex);
      return;
    }
    // Whatever of the body is still coming has nowhere to go.
    ex.req.off('data', onClientData);
    ex.req.off('end', onClientEnd);
    ex.req.resume();
    if (res.headersSent) {
      logger.warn(
        { upstream: upstream.name, code, request_id: ex.requestId },
        'upstream failed after the response started',
      );
      res.destroy();
      return;
    }
    // Every request meets it while the service is away: one line per 10 s and cause, with the count.
    limit(`${upstream.name} ${code}`, (omitidas) =>
      logger.warn(
        { upstream: upstream.name, code, reason: error.message, ...(omitidas ? { omitidas } : {}) },
        'upstream request failed',
      ),
    );
    fail(ex, code === UPSTREAM_TIMEOUT ? upstreamTimeout(upstream.name) : serviceUnavailable(upstream.name));
  }

  function onFastFinish(this: ServerResponse) {
    const ex = exchangeOf(this);
    observe(ex.upstream.name, ex.req.method!, this.statusCode, (performance.now() - ex.fast!.startedAt) / 1000);
  }

  const forward: GatewayProxy['forward'] = (req, res, name, requestId, next, fast) => {
    const upstream = options.upstreams[name];
    const ex: Exchange = {
      req,
      res,
      upstream,
      requestId,
      next,
      fast,
      headers: [],
      body: undefined,
      replayable: false,
      attemptsLeft: upstream.urls.length - 1,
      upstreamReq: undefined,
      upstreamRes: undefined,
      clientGone: false,
    };
    (res as Carrier)[EXCHANGE] = ex;
    (req as Carrier)[EXCHANGE] = ex;
    if (fast) {
      res.on('finish', onFastFinish);
      if (fast.refusal) return fail(ex, fast.refusal);
    }
    if (!upstream.enabled) return fail(ex, serviceNotDeployed(name));
    res.on('close', onClientClose);

    const declared = declaredLength(req);
    if (declared !== undefined && declared > bodyLimit) {
      if (declared > bodyLimit * 4) res.shouldKeepAlive = false;
      else discardRest(req, bodyLimit);
      return fail(ex, bodyTooLarge(bodyLimit));
    }
    if (!isChunked(req)) {
      ex.headers = requestHeadersFor(req, requestId);
      ex.replayable = !declared;
      return attempt(ex);
    }
    // A chunked body is read whole, counting, so one over the limit never reaches a service.
    readChunkedBody(req, bodyLimit).then(
      (body) => {
        if (body === undefined) {
          discardRest(req, bodyLimit, bodyLimit);
          return fail(ex, bodyTooLarge(bodyLimit));
        }
        ex.body = body;
        ex.replayable = true;
        ex.headers = requestHeadersFor(req, requestId, body.length);
        attempt(ex);
      },
      () => res.destroy(),
    );
  };

  const handler: RequestHandler = (req, res, next) => {
    const name = upstreamOf(req.path);
    if (!name) return next();
    forward(req, res, name, String(req.headers[REQUEST_ID_HEADER]), next, undefined);
  };

  return {
    forward,
    handler,
    close: () => {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
