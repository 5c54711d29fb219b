import { AsyncResource } from 'node:async_hooks';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { withRequestContext } from '@hub/log';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { bodyGuard, verifyUtf8 } from './guard';
import { stampRequestId } from './middleware';
import type { FastRoute } from './route';

/** A middleware as express runs it: a handler, or an error handler (four parameters). */
type Layer = RequestHandler | ErrorRequestHandler;

/** One fast route with what runs before its body: its admission chain (`admissionChain`), when it has one. */
export interface FastRouteEntry {
  route: FastRoute;
  ahead: Layer[];
}

export interface FastPathOptions {
  routes: FastRouteEntry[];
  /** Largest body, in bytes (the express path's `bodyLimit`): a longer one takes the express path. */
  bodyLimit: number;
  /** Times the request for `http_request_duration_seconds`, under its route's label (createHttpApp). */
  time(req: IncomingMessage, res: ServerResponse, route: () => string): void;
  /**
   * An express app that answers `error` with these error handlers and then the problem handler, as
   * the express path does (createHttpApp builds it with the same settings).
   */
  answerError(handlers: readonly ErrorRequestHandler[]): (req: IncomingMessage, res: ServerResponse) => void;
}

/** The Content-Type of a body the fast path reads itself (lower case); any other goes to express.json. */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8']);
const DIGITS = /^\d{1,9}$/;
/** JSON's white space (RFC 8259): space, tab, line feed, carriage return. */
const WHITE_SPACE = new Set([' ', '\t', '\n', '\r']);
const FAILURE = Symbol('fast path failure');
type Carrier = { [FAILURE]?: unknown };

/**
 * The hot routes on node:http (docs/decisions/hub-api-publication-on-node-http.md): a POST to a
 * route marked `fast`, whose URL is its path exactly and whose body is plain JSON (Content-Type
 * application/json, utf-8 or no charset, a Content-Length within the limit, no Transfer-Encoding
 * or Content-Encoding), is served here, without express's router, its request and response
 * prototypes, its middleware stack and body-parser. It runs the same steps in the same order with
 * the same code: the request id (in the log context), the metrics, the route's guards and
 * admission ahead of the body, the body read with the same limit and checks (verifyUtf8, JSON as
 * express.json parses it, bodyGuard), then the route's own chain; a failure is answered by the
 * route's error handlers and the problem handler on an express app (`answerError`), as on the
 * express path. Every other request (another path, a query, a chunked or compressed body, another
 * charset) takes the express path unchanged. Returns false when the request is not for it.
 */
export function createFastPath(options: FastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const byPath = new Map(
    options.routes.map((entry) => [
      entry.route.spec.path,
      {
        ...entry,
        path: entry.route.spec.path,
        // Errors before the route's chain (guards, admission, body) reach the problem handler
        // only, as on the express path, where the route's router never sees them.
        before: options.answerError([]),
        after: options.answerError(entry.route.errorHandlers),
      },
    ]),
  );
  const { bodyLimit } = options;

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const route = byPath.get(req.url ?? '');
    if (route === undefined) return false;
    const length = plainJsonLength(req.headers, bodyLimit);
    if (length < 0) return false;

    const id = stampRequestId(req, res);
    (res as { locals?: object }).locals = Object.create(null);
    withRequestContext(id, () => {
      // The label express gives: its route's path once a route of it matched (the admission
      // chain is one), 'unmatched' for a failure before that.
      let label = route.ahead.length > 0 ? route.path : 'unmatched';
      options.time(req, res, () => label);
      const fail = (answer: (req: IncomingMessage, res: ServerResponse) => void) => (error: unknown) => {
        (req as Carrier)[FAILURE] = error;
        answer(req, res);
      };
      run(route.ahead, req, res, fail(route.before), () =>
        readJson(req, res, length, fail(route.before), () => {
          label = route.path;
          run(route.route.chain, req, res, fail(route.after), () => undefined);
        }),
      );
    });
    return true;
  };
}

/** The first handler of `answerError`'s app: raises the fast path's failure there. */
export const raiseFastPathFailure: RequestHandler = (req, _res, next) => next((req as Carrier)[FAILURE]);

/** The body's declared length when the fast path reads it, or -1 when express must. */
function plainJsonLength(headers: IncomingHttpHeaders, limit: number): number {
  const type = headers['content-type'];
  if (type === undefined || !PLAIN_JSON.has(type.toLowerCase())) return -1;
  if (headers['transfer-encoding'] !== undefined || headers['content-encoding'] !== undefined) return -1;
  const declared = headers['content-length'];
  if (declared === undefined || !DIGITS.test(declared)) return -1;
  const length = Number(declared);
  return length <= limit ? length : -1;
}

/**
 * Runs middleware as express's router does: in order, an error skipping to the next error handler
 * (four parameters), a rejected promise being an error; `done` once the chain has called next past
 * its end, `fail` with an error nobody handled.
 */
function run(
  chain: readonly Layer[],
  req: IncomingMessage,
  res: ServerResponse,
  fail: (error: unknown) => void,
  done: () => void,
): void {
  let at = 0;
  const next = (error?: unknown): void => {
    while (at < chain.length) {
      const layer = chain[at++]!;
      const handlesErrors = layer.length === 4;
      if (error ? !handlesErrors : handlesErrors) continue;
      try {
        const result: unknown = error
          ? (layer as ErrorRequestHandler)(error, req as never, res as never, next)
          : (layer as RequestHandler)(req as never, res as never, next);
        if (result instanceof Promise)
          result.then(undefined, (rejected: unknown) => next(rejected || new Error('Rejected promise')));
      } catch (thrown) {
        next(thrown);
      }
      return;
    }
    if (error) fail(error);
    else done();
  };
  next();
}

/** An error as body-parser's dependencies make them: the problem handler reads its `type`. */
const libraryError = (error: Error, status: number, fields: Record<string, unknown>) =>
  Object.assign(error, { status, statusCode: status, expose: true, ...fields });

/**
 * Reads a plain JSON body as express.json does (createHttpApp's options): the raw bytes kept as
 * `rawBody` once they are UTF-8 (verifyUtf8), a leading byte order mark dropped, an empty body read
 * as {}, only an object or an array at the top (`strict`), then bodyGuard. The same failures, with
 * the same `type`, so the problem handler answers them the same (400 json_invalido, 422).
 */
function readJson(
  req: IncomingMessage,
  res: ServerResponse,
  length: number,
  fail: (error: unknown) => void,
  done: () => void,
): void {
  // Gone before its body was read (the guards wait for a token's check): as body-parser, nothing
  // is read and the route's chain goes on without a body (its 415, which nobody is left to read).
  if (finished(req)) {
    done();
    return;
  }
  // The body's events come in the socket's async context, not the request's, once the body arrives
  // after this point (sent after its headers, slowly, or after 100 Continue): what runs after them
  // (the route's chain, its log lines, the request id a publication sends with its jobs, the trace's
  // spans) would lose the request's context. raw-body, which express.json reads with, binds its
  // callback to the context it was called in, and so does this.
  const scope = new AsyncResource('hub.fast-path.body');
  const chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    chunks.push(chunk);
  };
  const onError = (error: Error) => {
    cleanup();
    scope.runInAsyncScope(fail, null, libraryError(error, 400, {}));
  };
  // The connection went before the body was whole (a client gone, the request deadline): as
  // raw-body's 'request aborted', which nobody is left to read.
  const onClose = () => {
    if (req.complete) return;
    cleanup();
    scope.runInAsyncScope(
      fail,
      null,
      libraryError(new Error('request aborted'), 400, {
        code: 'ECONNABORTED',
        expected: length,
        length,
        received,
        type: 'request.aborted',
      }),
    );
  };
  const onEnd = () => {
    cleanup();
    scope.runInAsyncScope(finish);
  };
  const finish = () => {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
    const withBody = req as IncomingMessage & { body?: unknown };
    try {
      verifyUtf8(req, res, body, 'utf-8');
      withBody.body = parseJson(body.toString('utf8'), req as IncomingMessage & { rawText?: string });
    } catch (error) {
      fail(error);
      return;
    }
    run([bodyGuard], req, res, fail, done);
  };
  const cleanup = () => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('close', onClose);
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('close', onClose);
}

/** on-finished's `isFinished` of a request, which body-parser asks first. */
const finished = (req: IncomingMessage) => !req.socket?.readable || (req.complete && !req.readable);

/** JSON.parse as express.json's strict parser: {} for nothing, an object or array only. */
function parseJson(text: string, req: { rawText?: string }): unknown {
  // iconv-lite, which body-parser decodes with, drops a byte order mark.
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // Kept for routes that read the text as sent (publication's dados): not decoded twice.
  req.rawText = json;
  if (json.length === 0) return {};
  let at = 0;
  while (at < json.length && WHITE_SPACE.has(json[at]!)) at++;
  const first = json[at];
  try {
    if (first !== '{' && first !== '[') throw new SyntaxError(`Unexpected token '${first}', not an object or array`);
    return JSON.parse(json);
  } catch (error) {
    throw libraryError(error as Error, 400, { type: 'entity.parse.failed', body: json });
  }
}
