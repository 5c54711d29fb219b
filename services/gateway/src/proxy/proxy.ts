import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { AppError, problemHandler, REQUEST_ID_HEADER } from '@hub/http';
import { createRepeatLimiter, type Logger } from '@hub/log';
import express, { type RequestHandler } from 'express';
import { type Dispatcher, Pool } from 'undici';
import type { ObserveRequest } from '../health/metrics';
import { type Instance, instanceOf, type Upstream, type UpstreamName, upstreamOf } from '../routes';
import { bodyTooLarge, CorpoInteiro, declaredLength, discardRest, isChunked, readChunkedBody } from './body-limit';
import { type GatewayHeaders, headerText, requestHeadersFor, setGatewayHeaders, writeUpstreamHead } from './headers';
import { ConexaoLeve, type Destino, type Receptor, VALOR_DE_CAMPO } from './leve';

export interface ProxyOptions {
  upstreams: Record<UpstreamName, Upstream>;
  bodyLimit: number;
  timeoutMs: number;
  logger: Logger;
  /** Where the fast path's requests are counted (the express path counts its own). */
  observe: ObserveRequest;
}

const UPSTREAM_TIMEOUT = 'UPSTREAM_TIMEOUT';
/** No one listens: the connection was refused, or the Unix socket's file is not there (a service stopped removes it). */
const NOT_LISTENING = new Set<string | undefined>(['ECONNREFUSED', 'ENOENT']);
/** undici's codes for a service silent too long: connecting, before its answer's head (its body's is after the status went). */
const TIMEOUTS = new Set<string | undefined>([UPSTREAM_TIMEOUT, 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']);

/** Seconds a client is told to wait when a service is not answering (`pnpm start` or Kubernetes restarts it in a few). */
export const SERVICO_RETRY_AFTER_S = 2;

/**
 * Connections kept to each service instance: enough for every request in flight at the load the
 * platform takes (hub-api admits 1,000 publications at once; the benchmarks use 50 connections),
 * few enough that a stuck service cannot make the gateway open sockets without end. Idle ones are
 * kept (up to the same number) so a burst does not reconnect, and closed after FREE_SOCKET_MS,
 * well before a service's own keep-alive timeout (65 s) could close one under a new request (undici
 * would otherwise keep one as long as the service's `Keep-Alive: timeout=65` says, less 2 s).
 */
export const UPSTREAM_SOCKETS = 256;
const FREE_SOCKET_MS = 30_000;

/**
 * A body with a length up to this is read whole before it is sent (a publication's event is about
 * 1 KiB): undici then writes the request's head and body in one system call instead of two, there
 * is no stream per request, and the request can go to the next instance when one refuses it.
 * Larger ones stream (CorpoDoCliente).
 */
export const INTEIRO_ATE = 16 * 1024;

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
 * Where one instance is, parsed once (routes.ts's Instance), and its connections: undici's pool, and
 * the fast path's light ones (leve.ts; plain HTTP and Unix sockets only: `destino` undefined for
 * HTTPS), the free ones last in, first out.
 */
type Target = {
  pool: Pool;
  destino: Destino | undefined;
  /** The Host a request without one is sent with (undici's: the origin's host). */
  host: string;
  livres: ConexaoLeve[];
} & Pick<Instance, 'prefix' | 'servername'>;

/** What undici reads of a request; `servername` is read too, though its types leave it out. */
type Dispatch = Dispatcher.DispatchOptions & { servername: string };

/** The fast path's part of a request: the gateway's answer headers, when it arrived (metrics), a refusal. */
export interface FastPath {
  gateway: GatewayHeaders;
  startedAt: number;
  /** The rate limit's 429, answered instead of forwarding. */
  refusal: AppError | undefined;
}

/**
 * A body with a length, on its way from the client to undici. undici takes a stream, not writes, and
 * the request itself is not handed over: undici destroys the stream it sends once done (or failed),
 * and destroys an IncomingMessage by first setting its `socket` to null, which the client's
 * connection still needs afterwards (listen() drains it after an early answer, or cuts it). Reading
 * it here also lets an answer that comes before the body stop the rest going anywhere.
 */
class CorpoDoCliente extends Readable {
  constructor(private readonly req: IncomingMessage) {
    super();
  }
  /** undici wants more (it drained the upstream socket): the client's request is read again. */
  override _read(): void {
    this.req.resume();
  }
}

const EXCHANGE = Symbol('gateway exchange');
const FAILURE = Symbol('gateway failure');
type Carrier = { [EXCHANGE]?: Exchange };
const exchangeOf = (emitter: unknown) => (emitter as Carrier)[EXCHANGE]!;

/** What the proxy's exchanges share: one per createProxy. */
interface ProxyShared {
  targets: Map<string, Target>;
  /** A free light connection to this instance, new if need be; undefined: all are taken, undici's pool. */
  leve(target: Target): ConexaoLeve | undefined;
  /** A light connection done with its request, free for the next. */
  devolver(target: Target, conexao: ConexaoLeve): void;
  timeoutMs: number;
  logger: Logger;
  fail(ex: Exchange, error: AppError): void;
  falhaDe(name: UpstreamName, error: Error): AppError;
}

/**
 * One request on its way through the gateway, and undici's handler of its request to the service
 * (its callbacks are the methods; undici's older handler interface, whose answer headers come raw,
 * as Buffer[], with no per-request wrapper: a handler of the newer one is wrapped, and its headers
 * parsed into an object). Listeners on the client's request and answer find it on them (no closure each).
 */
class Exchange implements Dispatcher.DispatchHandler, Receptor {
  /** The request's headers for the service, built once for every attempt. */
  headers: string[] = [];
  /** A chunked body read whole here; undefined when the body streams (or there is none). */
  body: Buffer | undefined = undefined;
  /** A body with a length, streaming (one attempt only). */
  corpo: CorpoDoCliente | undefined = undefined;
  /** A small body with a length, arriving (see INTEIRO_ATE). */
  inteiro: CorpoInteiro | undefined = undefined;
  /** Nothing of the request is consumed by sending it: no body, or one read here. */
  replayable = false;
  attemptsLeft: number;
  /** undici's abort of the request under way, once it is on a connection. */
  abort: ((error?: Error) => void) | undefined = undefined;
  /** undici's resume of the service's answer, paused while the client is not reading. */
  resume: (() => void) | undefined = undefined;
  /** The light connection the request under way went on, if it did (it goes back free when the answer is whole). */
  leve: { target: Target; conexao: ConexaoLeve } | undefined = undefined;
  /** While the answer is paused: when the service's silence becomes a timeout (see onData). */
  stalled: NodeJS.Timeout | undefined = undefined;
  clientGone = false;

  constructor(
    readonly proxy: ProxyShared,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly upstream: Upstream,
    readonly requestId: string,
    /** The express path's `next`; undefined on the fast path, whose errors the proxy answers itself. */
    readonly next: ((error?: unknown) => void) | undefined,
    readonly fast: FastPath | undefined,
  ) {
    this.attemptsLeft = upstream.urls.length - 1;
  }

  /**
   * Sends the request to the next instance of its service: on the fast path, a body read whole (or
   * none) goes on a light connection (leve.ts); anything else, or when all of those are taken,
   * through undici.
   */
  attempt(): void {
    const target = this.proxy.targets.get(this.upstream.url)!;
    this.abort = undefined;
    this.resume = undefined;
    const conexao = this.fast !== undefined && this.corpo === undefined ? this.proxy.leve(target) : undefined;
    if (conexao !== undefined) {
      this.leve = { target, conexao };
      conexao.enviar(
        requestHead(this.req.method!, target.prefix + this.req.url, this.headers, target.host),
        this.body,
        this.req.method === 'HEAD',
        this,
      );
      return;
    }
    const options: Dispatch = {
      path: target.prefix + this.req.url,
      method: this.req.method!,
      headers: this.headers,
      body: this.body ?? this.corpo ?? null,
      servername: target.servername,
      // Kept alive after a GET with a body (undici closes it then; the services are Node, node:http
      // kept them), but not after a HEAD: a service that sends its body anyway, a moment late, would
      // have it read as the next request's answer, another client's (undici's own default).
      reset: this.req.method === 'HEAD',
    };
    target.pool.dispatch(options, this);
  }

  onConnect(abort: (error?: Error) => void): void {
    // The client went while the request waited for a connection: it goes no further.
    if (this.clientGone) abort();
    else this.abort = abort;
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void, statusText: string): boolean {
    // 1xx (103 Early Hints): node:http's 'information', never passed on either; the final answer follows.
    if (status < 200) return true;
    // A reason phrase Node refuses to write (a control byte: llhttp lets it through) would throw
    // halfway through the client's head, leaving it unfit for the error answer too; undici turns a
    // throw here into onError before anything is written.
    if (!VALOR_DE_CAMPO.test(statusText))
      throw Object.assign(new Error('a control byte in the reason phrase'), { code: 'UPSTREAM_PROTOCOL' });
    this.onHeadersText(status, headerText(raw), resume, statusText);
    return true;
  }

  onHeadersText(status: number, headers: string[], resume: () => void, statusText: string): void {
    this.resume = resume;
    writeUpstreamHead(this.res, status, statusText, headers, this.fast?.gateway);
  }

  /**
   * The answer's body to the client. When the client does not take it as fast, the service's answer
   * is paused until it drains; a pause longer than GATEWAY_UPSTREAM_TIMEOUT ends the request as
   * before undici, when the upstream socket's idle timeout counted paused time too (undici's body
   * timeout does not), so a client that stops reading does not hold a connection to the service.
   */
  onData(chunk: Buffer): boolean {
    const res = this.res;
    if (res.write(chunk)) return true;
    res.once('drain', onClientDrain);
    this.stalled = setTimeout(onStalled, this.proxy.timeoutMs, this);
    return false;
  }

  onComplete(): void {
    if (this.leve !== undefined) {
      this.proxy.devolver(this.leve.target, this.leve.conexao);
      this.leve = undefined;
    }
    unstall(this);
    this.res.end();
    // The service answered before the body was all here (a 401 before reading it, a 503 of its
    // admission): the rest has nowhere to go. undici lets the upstream connection go itself (still
    // writing, it is closed rather than held while a slow client keeps sending); the client's own
    // connection is drained, then cut: listen().
    if (this.corpo !== undefined && !this.req.complete) stopReading(this.req);
  }

  onError(error: Error): void {
    this.leve = undefined;
    unstall(this);
    if (this.clientGone) return;
    const { res, upstream, proxy } = this;
    const code = (error as NodeJS.ErrnoException).code;
    // A refused connection (an instance down or restarting; on a Unix socket, its file gone too) is
    // tried on the next instance, once per instance, when nothing of the request was consumed.
    if (conexaoRecusada(error) && !res.headersSent && this.attemptsLeft > 0 && this.replayable) {
      proxy.logger.warn({ upstream: upstream.name, code }, 'upstream instance refused the connection; trying the next');
      this.attemptsLeft -= 1;
      this.attempt();
      return;
    }
    // Whatever of the body is still coming has nowhere to go.
    if (this.corpo !== undefined) stopReading(this.req);
    if (res.headersSent) {
      proxy.logger.warn(
        { upstream: upstream.name, code, request_id: this.requestId },
        'upstream failed after the response started',
      );
      res.destroy();
      return;
    }
    proxy.fail(this, proxy.falhaDe(upstream.name, error));
  }
}

const SLASH = 47;

/** No one listens at the instance: the request, when nothing of it was consumed, may go to the next one. */
export const conexaoRecusada = (error: Error) => NOT_LISTENING.has((error as NodeJS.ErrnoException).code);

/**
 * A request's line and headers as a light connection writes them, ending in the empty line: kept
 * alive, and with the instance's host when the client sent none (HTTP/1.0), as undici does.
 */
function requestHead(method: string, path: string, headers: readonly string[], hostOfTarget: string): string {
  let head = `${method} ${path} HTTP/1.1\r\n`;
  let host = false;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') host = true;
    head += `${name}: ${headers[i + 1]}\r\n`;
  }
  if (!host) head += `host: ${hostOfTarget}\r\n`;
  return `${head}connection: keep-alive\r\n\r\n`;
}

/** A request target in absolute form as origin form: the path express parsed from it, and its query as it came. */
function formaDeOrigem(path: string, url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? path : path + url.slice(query);
}

/** A small body's pieces, kept until its end; then the request goes (see INTEIRO_ATE). */
function onPequenoData(this: IncomingMessage, chunk: Buffer) {
  // Never past INTEIRO_ATE: the HTTP parser ends the body at its declared length.
  exchangeOf(this).inteiro!.add(chunk);
}
function onPequenoEnd(this: IncomingMessage) {
  const ex = exchangeOf(this);
  // A client gone before its body ended never gets here ('end' is not emitted); one gone since is
  // not sent for.
  if (ex.clientGone) return;
  ex.body = ex.inteiro!.body;
  ex.inteiro = undefined;
  ex.attempt();
}

/** The client's body goes to undici (through its CorpoDoCliente), which pauses it as the service takes it. */
function onClientData(this: IncomingMessage, chunk: Buffer) {
  if (!exchangeOf(this).corpo!.push(chunk)) this.pause();
}
function onClientEnd(this: IncomingMessage) {
  exchangeOf(this).corpo!.push(null);
}
/** The rest of the client's body is read and dropped. */
function stopReading(req: IncomingMessage) {
  req.off('data', onClientData);
  req.off('end', onClientEnd);
  req.resume();
}

function unstall(ex: Exchange) {
  if (ex.stalled === undefined) return;
  clearTimeout(ex.stalled);
  ex.stalled = undefined;
}
function onClientDrain(this: ServerResponse) {
  const ex = exchangeOf(this);
  unstall(ex);
  ex.resume?.();
}
function onStalled(ex: Exchange) {
  ex.stalled = undefined;
  ex.abort?.(Object.assign(new Error('the upstream did not answer in time'), { code: UPSTREAM_TIMEOUT }));
}

/** The client went away before its answer was written: the upstream request goes too, freeing its connection. */
function onClientClose(this: ServerResponse) {
  if (this.writableFinished) return;
  const ex = exchangeOf(this);
  ex.clientGone = true;
  ex.abort?.();
}

/** A light connection to one instance, taken for one request (GatewayProxy.leveDe). */
export interface Leve {
  /** Sends the request: its method, its target in origin form, its headers for the service, its whole body. */
  enviar(method: string, url: string, headers: readonly string[], body: Buffer | undefined, receptor: Receptor): void;
  /** Its answer is whole: the connection is free for the next request. */
  devolver(): void;
}

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
  /**
   * The raw front's way to a service (entrada.ts): a free light connection to its next instance;
   * undefined when there is none to have (a service not deployed here, an HTTPS instance, or
   * UPSTREAM_SOCKETS open).
   */
  leveDe(name: UpstreamName): Leve | undefined;
  /** How many instances service `name` has (a request refused by one goes to the next). */
  instancias(name: UpstreamName): number;
  /** What a request that failed on its way to service `name` is answered; the cause is logged once per 10 s. */
  falhaDe(name: UpstreamName, error: Error): AppError;
  /** GATEWAY_UPSTREAM_TIMEOUT, in ms. */
  timeoutMs: number;
  /** Drops the kept-alive upstream connections. */
  close(): void;
}

/**
 * Forwards a request to the service that owns its path with undici, a Pool of kept-alive
 * connections per instance (`dispatch`, raw header arrays both ways), streaming both bodies. Bodies
 * over the limit are refused here and never reach the service. A client that goes away aborts the
 * upstream request, so its connection is not left waiting for an answer nobody reads; a service that
 * dies mid-answer cuts the client's connection.
 */
export function createProxy(options: ProxyOptions): GatewayProxy {
  const { logger, bodyLimit, timeoutMs, observe } = options;
  const poolOptions: Pool.Options = {
    connections: UPSTREAM_SOCKETS,
    keepAliveTimeout: FREE_SOCKET_MS,
    keepAliveMaxTimeout: FREE_SOCKET_MS,
    // GATEWAY_UPSTREAM_TIMEOUT, "no byte from the service for this long": to connect, from the
    // request sent to its answer's head, and between two pieces of its answer's body (the pause
    // while the client is not reading is counted by Exchange.onData).
    connectTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  };
  const targets = new Map<string, Target>();
  for (const upstream of Object.values(options.upstreams))
    for (const url of upstream.urls) {
      const { origin, socketPath, prefix, servername } = instanceOf(url);
      const { protocol, port, host } = new URL(origin);
      targets.set(url, {
        pool: new Pool(origin, socketPath === undefined ? poolOptions : { ...poolOptions, socketPath }),
        host,
        livres: [],
        destino:
          socketPath !== undefined
            ? { path: socketPath }
            : protocol === 'http:'
              ? // servername: the host as a socket dials it (an IPv6 one without its brackets).
                { host: servername, port: Number(port || 80) }
              : undefined,
        prefix,
        servername,
      });
    }

  // Light connections (leve.ts): at most UPSTREAM_SOCKETS open at once across every instance, as
  // each of undici's pools is bounded; past it, a request goes through the pool.
  const abertas = new Set<ConexaoLeve>();
  function leve(target: Target): ConexaoLeve | undefined {
    if (target.destino === undefined) return undefined;
    const livre = target.livres.pop();
    if (livre !== undefined) return livre;
    if (abertas.size >= UPSTREAM_SOCKETS) return undefined;
    const nova = new ConexaoLeve(target.destino, timeoutMs, FREE_SOCKET_MS, (fechada) => {
      abertas.delete(fechada);
      const i = target.livres.indexOf(fechada);
      if (i !== -1) target.livres.splice(i, 1);
    });
    abertas.add(nova);
    return nova;
  }
  function devolver(target: Target, conexao: ConexaoLeve) {
    if (conexao.livre) target.livres.push(conexao);
  }

  // Errors of the fast path go through the one problem handler, like every other answer's.
  const errorApp = express();
  errorApp.disable('x-powered-by');
  errorApp.disable('etag');
  errorApp.use((req, _res, next) => next((req as { [FAILURE]?: unknown })[FAILURE]));
  errorApp.use(problemHandler(logger));

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
  const proxy: ProxyShared = {
    targets,
    leve,
    devolver,
    timeoutMs,
    logger,
    falhaDe,
    fail: (ex, error) => {
      if (ex.next) return ex.next(error);
      setGatewayHeaders(ex.res, ex.fast!.gateway);
      (ex.req as { [FAILURE]?: unknown })[FAILURE] = error;
      ex.req.headers[REQUEST_ID_HEADER] = ex.requestId;
      errorApp(ex.req, ex.res);
    },
  };
  const fail = proxy.fail;

  function onFastFinish(this: ServerResponse) {
    const ex = exchangeOf(this);
    observe(ex.upstream.name, ex.req.method!, this.statusCode, (performance.now() - ex.fast!.startedAt) / 1000);
  }

  const forward: GatewayProxy['forward'] = (req, res, name, requestId, next, fast) => {
    const upstream = options.upstreams[name];
    const ex = new Exchange(proxy, req, res, upstream, requestId, next, fast);
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
      // Its Content-Length goes on as it came: the HTTP parser ends the body at that length.
      if (declared !== undefined && declared > 0 && declared <= INTEIRO_ATE) {
        ex.replayable = true;
        ex.inteiro = new CorpoInteiro(INTEIRO_ATE, declared);
        req.on('data', onPequenoData);
        req.on('end', onPequenoEnd);
        return;
      }
      ex.replayable = !declared;
      if (!ex.replayable) {
        ex.corpo = new CorpoDoCliente(req);
        req.on('data', onClientData);
        req.on('end', onClientEnd);
      }
      return ex.attempt();
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
        ex.attempt();
      },
      () => res.destroy(),
    );
  };

  const handler: RequestHandler = (req, res, next) => {
    const name = upstreamOf(req.path);
    if (!name) return next();
    // A target in absolute form (`GET http://host/path`, which a server must accept: RFC 9112
    // §3.2.2) goes to the service in origin form, the path it was routed by and its query. undici
    // sends a path as given, absolute or not, and refuses one that starts with neither a slash nor
    // http:// or https:// (`HTTP://`, `ftp://`): that client's mistake was a 503 blaming the service.
    if (req.url.charCodeAt(0) !== SLASH) req.url = formaDeOrigem(req.path, req.url);
    forward(req, res, name, String(req.headers[REQUEST_ID_HEADER]), next, undefined);
  };

  function leveDe(name: UpstreamName): Leve | undefined {
    const upstream = options.upstreams[name];
    if (!upstream.enabled) return undefined;
    const target = targets.get(upstream.url)!;
    const conexao = leve(target);
    if (conexao === undefined) return undefined;
    return {
      enviar: (method, url, headers, body, receptor) =>
        conexao.enviar(
          requestHead(method, target.prefix + url, headers, target.host),
          body,
          method === 'HEAD',
          receptor,
        ),
      devolver: () => devolver(target, conexao),
    };
  }

  return {
    forward,
    handler,
    leveDe,
    instancias: (name) => options.upstreams[name].urls.length,
    falhaDe,
    timeoutMs,
    close: () => {
      for (const target of targets.values()) target.pool.destroy().catch(() => undefined);
      for (const conexao of [...abertas]) conexao.fechar();
    },
  };
}
