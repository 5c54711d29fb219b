import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '@hub/log';
import express, { type Express } from 'express';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { admissionChain } from './admission';
import { drainAfterEarlyAnswer, handleClientErrors, lastAnswerOf } from './client-error';
import { freeSocketPath, holdSocketPath } from './unix-socket';
import { createFastPath, raiseFastPathFailure } from './fast-path';
import { bodyGuard, urlGuard, verifyUtf8 } from './guard';
import { prontidaoMetric } from './metrics';
import { problemHandler, requestId, requestIdWithoutContext, routeNotFound } from './middleware';
import { buildOpenApi } from './openapi';
import type { ApiRouter, RouteSpec } from './route';

/** A readiness check: resolves when the dependency answers. */
export type ReadinessCheck = () => Promise<unknown>;

export interface HttpAppOptions {
  service: string;
  logger: Logger;
  routers: ApiRouter[];
  readiness?: Record<string, ReadinessCheck>;
  /** Largest JSON body accepted, in bytes (BODY_LIMIT unless given); larger is a 413. */
  bodyLimit?: number;
  /** Called with the app before the routers, for service-specific middleware. */
  before?: (app: Express) => void;
  /** Registers the service's own metrics in the registry /metrics serves. */
  metrics?: (registry: Registry) => void;
  /**
   * Whether the request id is in the context of the request's log lines (an AsyncLocalStorage;
   * default true). false: only on the request and its answer, for an app of health and metrics in a
   * process that keeps AsyncLocalStorage off (on Node 20 it hooks every promise of the process).
   */
  requestContext?: boolean;
}

/** The largest JSON body of every service, 1 MiB (as express.json's '1mb'). */
export const BODY_LIMIT = 1024 * 1024;

/** The settings of every express app of the platform (a service's, and the fast path's errors'). */
function configured(app: Express): Express {
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.set('query parser', 'simple');
  return app;
}

/**
 * The frame every service shares: request ids, JSON bodies, metrics, health, OpenAPI, then the
 * service's routers, then 404 and the problem+json error handler. No I/O happens here. Routes
 * marked `fast` are served by the app's first middleware (fast-path.ts), ahead of the rest of the
 * chain, so every server of the app (listen, a test's supertest) has them.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = configured(express());
  let serveFast: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  app.use((req, res, next) => {
    if (serveFast === undefined || !serveFast(req, res)) next();
  });
  const bodyLimit = options.bodyLimit ?? BODY_LIMIT;

  const checks = Object.entries(options.readiness ?? {});
  const verificar = () =>
    Promise.all(
      checks.map(async ([name, check]): Promise<[string, string]> => {
        try {
          await withTimeout(check(), 2000);
          return [name, 'ok'];
        } catch (error) {
          return [name, `falha: ${(error as Error).message}`];
        }
      }),
    );

  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });
  collectDefaultMetrics({ register: registry });
  if (checks.length) registry.registerMetric(prontidaoMetric(verificar));
  options.metrics?.(registry);
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

  /** Times a request under the label its route gives when it is answered. */
  const time = (req: IncomingMessage, res: ServerResponse, route: () => string) => {
    const end = duration.startTimer();
    res.on('finish', () => end({ method: req.method, route: route(), status: res.statusCode }));
  };

  app.use(options.requestContext === false ? requestIdWithoutContext : requestId);
  app.use((req, res, next) => {
    time(req, res, () => (req.route?.path ? req.baseUrl + req.route.path : 'unmatched'));
    next();
  });
  // Admission control of the routes that declare one, after their guards and before anything reads
  // the body: matched by express on the routes' own method and path.
  const admitted = express.Router();
  const ahead = new Map<RouteSpec, ReturnType<typeof admissionChain>>();
  for (const spec of options.routers.flatMap((r) => r.specs))
    if (spec.admission) {
      const chain = admissionChain(spec.guards ?? [], spec.admission);
      ahead.set(spec, chain);
      admitted[spec.method](spec.path, ...chain);
    }
  app.use(admitted);
  app.use(urlGuard);
  app.use(
    express.json({
      limit: bodyLimit,
      type: ['application/json', 'application/*+json'],
      verify: verifyUtf8,
    }),
  );
  app.use(bodyGuard);

  app.get('/saude', (_req, res) => {
    res.json({ situacao: 'ok', servico: options.service });
  });
  app.get('/saude/prontidao', async (_req, res) => {
    const estados = await verificar();
    const ready = estados.every(([, state]) => state === 'ok');
    res.status(ready ? 200 : 503).json({
      situacao: ready ? 'ok' : 'indisponivel',
      servico: options.service,
      dependencias: Object.fromEntries(estados),
    });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  const openapi = buildOpenApi(
    options.service,
    options.routers.flatMap((r) => r.specs),
  );
  app.get('/openapi.json', (_req, res) => {
    res.json(openapi);
  });

  options.before?.(app);
  for (const router of options.routers) app.use(router.router);
  app.use(routeNotFound);
  const problems = problemHandler(options.logger);
  app.use(problems);

  const fastRoutes = options.routers.flatMap((r) => r.fastRoutes);
  if (fastRoutes.length > 0) {
    serveFast = createFastPath({
      routes: fastRoutes.map((route) => ({ route, ahead: ahead.get(route.spec) ?? [] })),
      bodyLimit,
      time,
      answerError: (handlers) => configured(express()).use(raiseFastPathFailure, ...handlers, problems),
    });
  }
  return app;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * How long a request may take to arrive whole, headers and body (Node's requestTimeout; its default
 * is 300 s): past it the request is answered 408 `tempo_esgotado` and its connection closed, so a
 * client sending slowly holds a connection (and, authenticated, an admission slot) for this long at
 * most. 1 MB, the largest body, takes 30 s at 33 KB/s.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long the headers alone may take (Node's headersTimeout; default 60 s): they are a few hundred bytes. */
export const HEADERS_TIMEOUT_MS = 10_000;
/**
 * Connections the kernel holds for a server before it accepts them (Node's default is 511; Linux
 * caps it at net.core.somaxconn, 4096 on current kernels). Past it new connections' SYNs are
 * dropped and clients resend them after 1 s and 3 s: a burst of new connections while the event
 * loop is busy (a spike of publishers) would wait seconds before any answer, 503 included. 4,096
 * accepted at 3,000 a second is under 1.4 s of wait.
 */
export const LISTEN_BACKLOG = 4096;
/** How long a closing server waits for the answers under way before it cuts every connection (below SHUTDOWN_TIMEOUT's 15 s). */
const CLOSE_GRACE_MS = 10_000;

export interface ListenOptions {
  /** REQUEST_TIMEOUT_MS unless given (tests); the headers get the lesser of it and HEADERS_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /**
   * A Unix socket to serve the same app on as well (HUB_API_SOCKET and the like), for a gateway on
   * the same host: a socket file left by a process that died is replaced, one another process still
   * serves is not (see freeSocketPath).
   */
  socket?: string;
}

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  /** The Unix socket it also serves on, when asked to. */
  socket?: string;
  close(): Promise<void>;
}

/** One listening server of the app and how to close it, letting the answers under way finish. */
interface Served {
  server: Server;
  close(): Promise<void>;
}

async function serve(
  app: Express | RequestListener,
  requestTimeout: number,
  where: { port: number; host: string } | { path: string },
): Promise<Served> {
  const server = handleClientErrors(
    createServer(
      {
        requestTimeout,
        headersTimeout: Math.min(requestTimeout, HEADERS_TIMEOUT_MS),
        // How often Node looks for requests past those times (default 30 s, as long as the timeout itself).
        connectionsCheckingInterval: Math.min(1_000, requestTimeout),
      },
      app,
    ),
  );
  server.listen({ ...where, backlog: LISTEN_BACKLOG });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  let closing = false;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (closing) res.shouldKeepAlive = false;
    res.once('close', () => {
      if (res.writableFinished) drainAfterEarlyAnswer(req);
    });
  });
  return {
    server,
    // Node removes a Unix socket's file when its server closes.
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        closing = true;
        // A connection busy at close() would otherwise stay open for keepAliveTimeout after its answer
        // (and close() resolve only then): the last answer of each connection still to be written
        // says `Connection: close` (the ones queued before it still go out), and the connection of an
        // answer already under way is closed once it is sent. A connection with nothing to answer goes
        // at once (one that sent nothing yet, or half a head: once closing, Node no longer times them out).
        for (const socket of connections) {
          const last = lastAnswerOf(socket);
          if (!last) socket.destroy();
          else if (!last.headersSent) last.shouldKeepAlive = false;
          else last.once('finish', () => setImmediate(() => server.closeIdleConnections()));
        }
        // What is still open after CLOSE_GRACE_MS (a body that never comes, a head trickled in after
        // the last answer) is cut, so a stop ends within its SHUTDOWN_TIMEOUT.
        const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        cut.unref();
        server.once('close', () => clearTimeout(cut));
      }),
  };
}

/**
 * Listens on the port (0 for any) of `host` (the service's HOST setting; 127.0.0.1 when not given)
 * with an express app (or any request listener), and on `options.socket` too when given. Requests
 * Node's parser refuses (headers over its limit, malformed HTTP) get a problem+json answer (see
 * answerClientError), as do requests that do not arrive within REQUEST_TIMEOUT_MS (408). An answer
 * sent before its request's body arrived leaves the rest DRAIN_MS to come (drainAfterEarlyAnswer).
 */
export async function listen(
  app: Express | RequestListener,
  port: number,
  host = '127.0.0.1',
  options: ListenOptions = {},
): Promise<RunningServer> {
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const tcp = await serve(app, requestTimeout, { port, host });
  let unix: Served | undefined;
  if (options.socket !== undefined) {
    let release: (() => void) | undefined;
    try {
      release = await holdSocketPath(options.socket);
      await freeSocketPath(options.socket);
      unix = await serve(app, requestTimeout, { path: options.socket });
    } catch (error) {
      await tcp.close();
      throw error;
    } finally {
      // Bound now, it answers: a process starting on it from here on is refused by freeSocketPath.
      release?.();
    }
  }
  const actual = (tcp.server.address() as AddressInfo).port;
  return {
    server: tcp.server,
    port: actual,
    url: `http://${host}:${actual}`,
    ...(options.socket !== undefined ? { socket: options.socket } : {}),
    close: async () => {
      await Promise.all([tcp.close(), unix?.close()]);
    },
  };
}

/**
 * Runs a service's main: starts it, and on SIGTERM or SIGINT stops it cleanly (stop accepting,
 * drain, close connections), exiting 1 if it cannot start. A stop that takes longer than the
 * `shutdownTimeoutMs` the started service gives (its SHUTDOWN_TIMEOUT) exits 1 anyway, before the
 * orchestrator's own kill.
 */
export function runMain(
  logger: Logger,
  start: () => Promise<{ stop: () => Promise<void>; shutdownTimeoutMs: number }>,
): void {
  let stopping = false;
  start()
    .then(({ stop, shutdownTimeoutMs }) => {
      const shutdown = (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, 'stopping');
        const force = setTimeout(() => {
          logger.error({ shutdownTimeoutMs }, 'did not stop within SHUTDOWN_TIMEOUT; exiting');
          process.exit(1);
        }, shutdownTimeoutMs);
        force.unref();
        stop().then(
          () => process.exit(0),
          (error) => {
            logger.error({ err: error }, 'error while stopping');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGINT', () => shutdown('SIGINT'));
    })
    .catch((error) => {
      logger.fatal({ err: error }, 'could not start');
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
}
