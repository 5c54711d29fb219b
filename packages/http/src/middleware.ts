import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRepeatLimiter, type Logger, withRequestContext } from '@hub/log';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, problemOf } from './errors';
import { BANCO_RETRY_AFTER_S, bancoIndisponivel, bancoIndisponivelErro } from './unavailable';

export const REQUEST_ID_HEADER = 'x-request-id';
const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The caller's request id when it is sane (one value of at most 128 word characters, `.`, `:` or `-`), or a new one. */
export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The request's id (requestIdOf), put in its headers, for what reads them on, and in its answer's. */
export function stampRequestId(req: IncomingMessage, res: ServerResponse): string {
  const id = requestIdOf(req.headers[REQUEST_ID_HEADER]);
  req.headers[REQUEST_ID_HEADER] = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** Keeps the caller's request id when it is sane, or makes one; every log line carries it. */
export const requestId: RequestHandler = (req, res, next) => {
  withRequestContext(stampRequestId(req, res), next);
};

/**
 * The same request id on the request and its answer, but not in the log lines' context: for an
 * app that serves only health and metrics in a process that must keep AsyncLocalStorage (and with
 * it, on Node 20, a hook on every promise) off — the delivery worker.
 */
export const requestIdWithoutContext: RequestHandler = (req, res, next) => {
  stampRequestId(req, res);
  next();
};

export const routeNotFound: RequestHandler = (req) => {
  throw new AppError(404, 'rota_inexistente', `no route ${req.method} ${req.path}`);
};

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

/** Errors of express.json() and of express's router turned into the platform's errors. */
function fromLibrary(error: BodyParserError): AppError | undefined {
  // The router decodes path params and throws this on bad percent-encoding; urlGuard refuses such
  // paths first, so this only serves apps built without createHttpApp (the gateway).
  if (error instanceof URIError) {
    return new AppError(400, 'caminho_invalido', 'the path has percent-encoding that does not decode to UTF-8');
  }
  switch (error.type) {
    case 'entity.parse.failed':
      return new AppError(400, 'json_invalido', 'the body is not valid JSON');
    case 'entity.too.large':
      return new AppError(413, 'corpo_grande_demais', 'the body is larger than this route accepts');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError(415, 'tipo_de_conteudo_invalido', error.message);
    default:
      return undefined;
  }
}

/** The request id stampRequestId put on the request, for log lines written without a request context. */
const requestIdOn = (req: IncomingMessage): { request_id?: string } => {
  const id = req.headers[REQUEST_ID_HEADER];
  return typeof id === 'string' ? { request_id: id } : {};
};

/**
 * The log line of a known error answered as a problem: at warn, with `contexto` naming the request.
 * A 5xx repeats for every request while its cause lasts: once per 10 s and kind through `limit`
 * (`omitidas`: how many were not).
 */
export function registrarProblema(
  logger: Logger,
  limit: ReturnType<typeof createRepeatLimiter>,
  known: AppError,
  contexto: Record<string, unknown>,
): void {
  const write = (omitidas = 0) =>
    logger.warn(
      { status: known.status, codigo: known.codigo, ...contexto, ...(omitidas ? { omitidas } : {}) },
      known.detail,
    );
  if (known.status >= 500) limit(`${known.status} ${known.codigo}`, write);
  else write();
}

/**
 * The ONE place that writes errors: application/problem+json, 4xx at warn, 5xx at error with an id.
 * Its log lines name the request id themselves (the one on the request), so they carry it in a
 * process that keeps AsyncLocalStorage off too (the gateway, the delivery worker's health app).
 * A lost or unreachable database is 503 `banco_indisponivel` with Retry-After, not a 500: the
 * request may succeed once it is back. Such a 5xx repeats for every request while the outage lasts:
 * it is logged at warn once per 10 s and kind (`omitidas`: how many were not), not once per request.
 */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  const limit = createRepeatLimiter();
  return (error: unknown, req, res, _next) => {
    const known =
      error instanceof AppError
        ? error
        : (fromLibrary(error as BodyParserError) ?? (bancoIndisponivel(error) ? bancoIndisponivelErro() : undefined));
    if (res.headersSent) {
      logger.error({ err: error, ...requestIdOn(req) }, 'error after the response started');
      res.destroy();
      return;
    }
    if (known) {
      const causa = known === error ? undefined : { err: error };
      registrarProblema(logger, limit, known, { method: req.method, path: req.path, ...requestIdOn(req), ...causa });
      res
        .status(known.status)
        // Every 503 says when to come back; one that names no time of its own gets the database's.
        .set({ ...(known.status === 503 ? { 'Retry-After': String(BANCO_RETRY_AFTER_S) } : {}), ...known.headers })
        .type('application/problem+json')
        .json(problemOf(known));
      return;
    }
    const erroId = randomUUID();
    logger.error(
      { err: error, erro_id: erroId, method: req.method, path: req.path, ...requestIdOn(req) },
      'unexpected error',
    );
    res
      .status(500)
      .type('application/problem+json')
      .json({
        ...problemOf(new AppError(500, 'erro_interno', 'an unexpected error happened; quote erro_id to the operators')),
        erro_id: erroId,
      });
  };
}
