import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { AppError, REQUEST_ID_HEADER } from '@hub/http';
import { createRepeatLimiter, type Logger } from '@hub/log';
import type { Request, RequestHandler } from 'express';
import { compile } from 'proxy-addr';
import { type Dispatcher, Pool } from 'undici';
import { instanceOf, type Upstream, type UpstreamName, upstreamOf } from '../routes';
import {
  BUDGET_SPENT,
  type BodyBudget,
  bodyTooLarge,
  declaredLength,
  discardRest,
  isChunked,
  readWholeBody,
} from './body-limit';
import { answerHeadersFor, requestHeadersFor } from './headers';
import type { GatewayLimits } from './limits';

export interface ProxyOptions {
  upstreams: Record<UpstreamName, Upstream>;
  bodyLimit: number;
  timeoutMs: number;
  logger: Logger;
  /** Requests under way at once to one service, per instance of it (sizes undici's pools and the body budget). */
  maxInFlight: number;
  /** The bounds on what waits for each service (limits.ts). */
  limits: GatewayLimits;
  /** GATEWAY_TRUST_PROXY, as express's `trust proxy` takes it. */
  trustProxy: boolean | number | string;
}

const UPSTREAM_TIMEOUT = 'UPSTREAM_TIMEOUT';
/** No one listens: the connection was refused, or the Unix socket's file is not there (a service stopped removes it). */
const NOT_LISTENING = new Set<string | undefined>(['ECONNREFUSED', 'ENOENT']);
/** undici's codes for a service silent too long: connecting, before its answer's head (its body's is after the status went). */
const TIMEOUTS = new Set<string | undefined>([UPSTREAM_TIMEOUT, 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']);

/** Seconds a client is told to wait when a service is not answering (`pnpm start` or Kubernetes restarts it in a few). */
export const SERVICO_RETRY_AFTER_S = 2;

/**
 * Connections kept to each service instance: as many as requests may be under way to it
 * (GATEWAY_MAX_IN_FLIGHT), so no request waits in undici's queue. Idle ones are closed after
 * FREE_SOCKET_MS, well before a service's own keep-alive timeout (65 s) could close one under a new
 * request.
 */
const FREE_SOCKET_MS = 30_000;

/**
 * A body with a length up to this is read whole before it is sent (a publication's event is about
 * 1 KiB), so the request can go to the next instance when one refuses it; a larger one streams.
 */
export const INTEIRO_ATE = 16 * 1024;

/**
 * Bytes of bodies read whole the gateway holds at once for one service, per slot of it
 * (GATEWAY_MAX_IN_FLIGHT per instance): 16 MiB by default, sixteen thousand 1 KiB publications. A
 * body is read before it takes a slot, so clients trickling theirs hold no slot; this bounds what
 * they make the gateway hold instead (a chunked body is read whole up to GATEWAY_BODY_LIMIT). Past
 * it: 503 sobrecarregado, the connection closed.
 */
export const BUFFERED_PER_SLOT = 64 * 1024;

/**
 * A service that refused the connection or failed before its answer started (restarting, killed):
 * 503 with Retry-After, so a client waits and sends again (publishers with their Idempotency-Key: a
 * request the service had committed answers the first event).
 */
export const serviceUnavailable = (name: string) =>
  new AppError(
    503,
    'servico_indisponivel',
    `the ${name} service is not answering; send the request again after Retry-After`,
    undefined,
    { 'Retry-After': String(SERVICO_RETRY_AFTER_S) },
  );

/** A service not deployed here (GATEWAY_UPSTREAMS): a configuration, not an outage; waiting does not help. */
export const serviceNotDeployed = (name: string) =>
  new AppError(502, 'servico_indisponivel', `the ${name} service is not deployed behind this gateway`);

/** The service took too long: the request may or may not have been done (publishers retry with their Idempotency-Key). */
const upstreamTimeout = (name: string) =>
  new AppError(
    504,
    'tempo_esgotado',
    `the ${name} service did not answer in time; send the request again after Retry-After`,
    undefined,
    { 'Retry-After': String(SERVICO_RETRY_AFTER_S) },
  );

/** Where one instance is (routes.ts's Instance) and undici's pool of kept-alive connections to it. */
interface Target {
  pool: Pool;
  prefix: string;
}

/** The request's body as undici sends it: none, read whole, or streaming (one attempt only). */
type Body = { kind: 'none' } | { kind: 'whole'; bytes: Buffer } | { kind: 'stream'; length: number };

/** One request on its way to a service. */
interface Exchange {
  req: Request;
  res: ServerResponse;
  next: (error?: unknown) => void;
  name: UpstreamName;
  upstream: Upstream;
  headers: Record<string, string | string[]>;
  body: Body;
  /** Aborts the request to the service: the client went away. */
  abort: AbortController;
  /** When the request was sent and, once its answer's head came, how long that took. */
  sentAt: number;
  answeredInMs: number | undefined;
}

export interface GatewayProxy {
  /** The proxy on the express app: a path of a service goes to it; any other to the next handler. */
  handler: RequestHandler;
  /** What a request that failed on its way to service `name` is answered; the cause is logged once per 10 s. */
  falhaDe(name: UpstreamName, error: Error): AppError;
  /** Drops the kept-alive upstream connections. */
  close(): void;
}

/**
 * Forwards a request to the service that owns its path with undici (a Pool of kept-alive connections
 * per instance). node:http parsed the request; undici writes the framing the service gets, and
 * node:http the framing of the answer: nothing of the gateway's reads or writes HTTP/1.1 framing
 * (docs/decisions/gateway-on-node-http-and-undici.md). Bodies over the limit are refused here
 * and never reach a service; a small body is read whole and may go to the next instance when one
 * refuses the connection; a larger one streams. A client that goes away aborts the upstream request;
 * a service that dies mid-answer cuts the client's connection. At most `maxInFlight` requests per
 * instance are under way to a service, fewer while it answers slower than `targetMs`; one more is
 * 503 at once, so nothing queues without bound (docs/decisions/overload-refused-fast.md).
 */
export function createProxy(options: ProxyOptions): GatewayProxy {
  const { logger, bodyLimit, timeoutMs } = options;
  const targets = new Map<string, Target>();
  for (const upstream of Object.values(options.upstreams))
    for (const url of upstream.urls) targets.set(url, targetOf(url, options));
  const limits = options.limits;
  const budgets = new Map<UpstreamName, BodyBudget>();
  for (const [name, upstream] of Object.entries(options.upstreams) as [UpstreamName, Upstream][])
    budgets.set(name, { used: 0, max: options.maxInFlight * upstream.urls.length * BUFFERED_PER_SLOT });
  const trusted = trustOf(options.trustProxy);

  const limit = createRepeatLimiter();
  const falhaDe = (name: UpstreamName, error: Error) => {
    const code = (error as NodeJS.ErrnoException).code;
    // Every request meets it while the service is away: one line per 10 s and cause, with the count.
    limit(`${name} ${code}`, (omitidas) =>
      logger.warn(
        { upstream: name, code, reason: error.message, ...(omitidas ? { omitidas } : {}) },
        'upstream request failed',
      ),
    );
    return TIMEOUTS.has(code) ? upstreamTimeout(name) : serviceUnavailable(name);
  };

  const handler: RequestHandler = (req, res, next) => {
    const name = upstreamOf(req.path);
    if (!name) return next();
    const upstream = options.upstreams[name];
    if (!upstream.enabled) return next(serviceNotDeployed(name));
    const declared = declaredLength(req);
    if (declared !== undefined && declared > bodyLimit) {
      if (declared > bodyLimit * 4) res.shouldKeepAlive = false;
      else discardRest(req, bodyLimit);
      return next(bodyTooLarge(bodyLimit));
    }
    const abort = new AbortController();
    // The client gone before its answer, or answered by the gateway itself (the 408 of a body that did
    // not arrive in time): the service's request ends too, its answer would have nowhere to go.
    res.once('close', () => {
      if (!res.writableFinished || ex.answeredInMs === undefined) abort.abort();
    });
    const streamed = !isChunked(req) && declared !== undefined && declared > INTEIRO_ATE ? declared : undefined;
    const remoteAddress = req.socket.remoteAddress;
    const forwarding = { remoteAddress, trusted: remoteAddress !== undefined && trusted(remoteAddress, 0) };
    const ex: Exchange = {
      req,
      res,
      next,
      name,
      upstream,
      headers: requestHeadersFor(req, String(req.headers[REQUEST_ID_HEADER]), forwarding, streamed),
      body: { kind: 'none' },
      abort,
      sentAt: 0,
      answeredInMs: undefined,
    };
    // A slot is taken only once the request can go: a body read whole is read first, so clients
    // trickling theirs (with no token, even) hold connections to the gateway, never the service's slots.
    const admitted = () => {
      // The client went away as its body ended: its 'close' has been, and would never give the slot back.
      if (res.destroyed) return false;
      const refusal = limits.take(name, req, res, () => ex.answeredInMs, streamed !== undefined);
      if (refusal) next(refusal);
      return refusal === undefined;
    };
    if (streamed !== undefined) {
      if (!admitted()) return;
      ex.body = { kind: 'stream', length: streamed };
      return void send(ex, 0);
    }
    if (!isChunked(req) && !declared) return void (admitted() && send(ex, upstream.urls.length - 1));
    const reading = readWholeBody(req, bodyLimit, declared ?? INTEIRO_ATE, budgets.get(name));
    res.once('close', reading.release);
    reading.body.then(
      (bytes) => {
        if (bytes === BUDGET_SPENT) {
          reading.release();
          res.shouldKeepAlive = false;
          return next(limits.refusalOf(name, req));
        }
        if (bytes === undefined) {
          discardRest(req, bodyLimit, bodyLimit);
          return next(bodyTooLarge(bodyLimit));
        }
        ex.body = { kind: 'whole', bytes };
        if (admitted()) void send(ex, upstream.urls.length - 1);
      },
      () => res.destroy(),
    );
  };

  /** Sends the request to the next instance; a refused connection goes to the one after, `retries` times. */
  async function send(ex: Exchange, retries: number): Promise<void> {
    const { req, res } = ex;
    const target = targets.get(ex.upstream.url)!;
    const body = bodyFor(ex);
    ex.sentAt = performance.now();
    try {
      const answer = await target.pool.request({
        path: target.prefix + originForm(req),
        method: req.method as Dispatcher.HttpMethod,
        headers: ex.headers,
        body,
        signal: ex.abort.signal,
        // Not kept alive after a HEAD: a service that sends a body anyway, a moment late, would
        // have it read as the next request's answer (undici's own default for HEAD).
        reset: req.method === 'HEAD',
      });
      relay(ex, answer);
    } catch (error) {
      if (ex.abort.signal.aborted) return;
      if (NOT_LISTENING.has((error as NodeJS.ErrnoException).code) && retries > 0 && ex.body.kind !== 'stream') {
        logger.warn({ upstream: ex.name }, 'upstream instance refused the connection; trying the next');
        return send(ex, retries - 1);
      }
      if (ex.body.kind === 'stream') stopReading(req);
      if (res.headersSent) res.destroy();
      else ex.next(falhaDe(ex.name, error as Error));
    }
  }

  /**
   * The service's answer to the client. A client that does not take it as fast pauses the service's;
   * a pause longer than GATEWAY_UPSTREAM_TIMEOUT ends the request (undici's body timeout does not
   * count paused time), so a client that stops reading does not hold a connection to the service.
   */
  function relay(ex: Exchange, answer: Dispatcher.ResponseData): void {
    const { res, req } = ex;
    ex.answeredInMs = performance.now() - ex.sentAt;
    const body = answer.body;
    // Destroyed without an error listener, undici's body emits 'error' unheard: the process dies.
    body.on('error', () => undefined);
    // Answered already by the gateway itself (its 408 for a body that did not arrive in time), or the
    // client is gone: the service's answer has nowhere to go. Writing its head threw, and took the
    // gateway down with it.
    if (res.headersSent || res.destroyed) {
      body.destroy();
      if (ex.body.kind === 'stream') stopReading(req);
      return;
    }
    try {
      res.writeHead(answer.statusCode, answerHeadersFor(answer.headers, res.getHeaders()));
    } catch (error) {
      // A header Node refuses to write (a control byte undici let through): nothing was sent yet.
      body.destroy();
      throw Object.assign(error as Error, { code: 'UPSTREAM_PROTOCOL' });
    }
    let stalled: NodeJS.Timeout | undefined;
    const unstall = () => {
      clearTimeout(stalled);
      stalled = undefined;
    };
    body.on('data', (chunk: Buffer) => {
      if (res.write(chunk)) return;
      body.pause();
      stalled = setTimeout(
        () => body.destroy(Object.assign(new Error('client stalled'), { code: UPSTREAM_TIMEOUT })),
        timeoutMs,
      );
    });
    res.on('drain', () => {
      unstall();
      body.resume();
    });
    body.once('end', () => {
      unstall();
      res.end();
      // The service answered before the body was all here (a 401 before reading it): the rest has
      // nowhere to go; listen() drains the client's connection, then cuts it.
      if (ex.body.kind === 'stream' && !req.complete) stopReading(req);
    });
    body.once('error', () => {
      unstall();
      if (ex.body.kind === 'stream') stopReading(req);
      res.destroy();
    });
  }

  return {
    handler,
    falhaDe,
    close: () => {
      for (const target of targets.values()) target.pool.destroy().catch(() => undefined);
    },
  };

  /** The body as undici takes it. A streamed one goes through a stream of its own: undici destroys what it sends. */
  function bodyFor(ex: Exchange): Buffer | PassThrough | null {
    if (ex.body.kind === 'whole') return ex.body.bytes;
    if (ex.body.kind === 'none') return null;
    const corpo = new PassThrough();
    ex.req.pipe(corpo);
    // The service's answer time counts from the body's end: a client uploading slowly (on purpose,
    // without a token even) is not the service answering slowly, and would cut the bound for everyone.
    ex.req.once('end', () => {
      if (ex.answeredInMs === undefined) ex.sentAt = performance.now();
    });
    return corpo;
  }
}

function targetOf(url: string, options: ProxyOptions): Target {
  const { origin, socketPath, prefix, servername } = instanceOf(url);
  const pool = new Pool(origin, {
    connections: options.maxInFlight,
    keepAliveTimeout: FREE_SOCKET_MS,
    keepAliveMaxTimeout: FREE_SOCKET_MS,
    // GATEWAY_UPSTREAM_TIMEOUT, "no byte from the service for this long": to connect, from the request
    // sent to its answer's head, and between two pieces of its answer's body.
    connectTimeout: options.timeoutMs,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    // The instance's own name for TLS, not the client's Host (which the service still receives).
    connect: { servername },
    ...(socketPath !== undefined ? { socketPath } : {}),
  });
  return { pool, prefix };
}

/**
 * GATEWAY_TRUST_PROXY as express reads `trust proxy`: all, none, a count of hops, or addresses and
 * subnets (proxy-addr's, which express uses).
 */
function trustOf(trust: boolean | number | string): (address: string, hop: number) => boolean {
  if (typeof trust === 'boolean') return () => trust;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return compile(
    trust
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/**
 * The request target as the service gets it: in origin form. A target in absolute form (`GET
 * http://host/path`, which a server must accept: RFC 9112 §3.2.2) becomes the path express routed it
 * by and its query as it came.
 */
function originForm(req: Request): string {
  const url = req.url;
  if (url.startsWith('/')) return url;
  const query = url.indexOf('?');
  return query === -1 ? req.path : req.path + url.slice(query);
}

/** The rest of the client's body is read and dropped. */
function stopReading(req: IncomingMessage) {
  req.unpipe();
  req.resume();
}
