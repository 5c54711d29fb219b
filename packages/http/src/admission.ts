import { performance } from 'node:perf_hooks';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AdaptiveLimit } from './adaptive-limit';
import { AppError } from './errors';

export interface AdmissionOptions {
  /** Requests of those under way at once in this process; one more is answered 503 at once. */
  max: number;
  /** What those requests are, for the refusal's detail (e.g. 'publications'). */
  what: string;
  /** Seconds the client is told to wait (Retry-After). */
  retryAfterSeconds?: number;
  /** Told of every request refused (metrics). */
  onShed?: () => void;
  /**
   * The answer time aimed at: when answers come slower, fewer than `max` are let in at once
   * (AdaptiveLimit), so that an overload is refused at once instead of waiting. Unset: `max` only.
   */
  targetMs?: number;
  /** The fewest let in at once however slow the answers (AdaptiveLimit's `min`; 4 unless told). */
  min?: number;
}

/**
 * Admission control: at most `max` of the matching requests under way at once in the process, from
 * their arrival to the end of their answer. One more is answered before its body is read: 503
 * `sobrecarregado` with Retry-After, nothing done, so an overload costs the refused requests nothing
 * and the accepted ones wait in a bounded queue (bounded memory, bounded latency) instead of one that
 * grows as long as the overload lasts. Clients retry after Retry-After (as @hub/client does).
 *
 * Declared on the routes it is for (`admission` of their RouteSpec); `createHttpApp` runs it for
 * them ahead of the body parser, after their guards (`admissionChain`): only a request whose token
 * passed takes a slot. One limiter on several routes counts their requests together.
 */
export function admission(options: AdmissionOptions): RequestHandler {
  const limit = new AdaptiveLimit({
    max: options.max,
    min: options.min,
    targetMs: options.targetMs ?? Number.POSITIVE_INFINITY,
  });
  const retryAfter = String(options.retryAfterSeconds ?? 1);
  const refusal = () =>
    new AppError(
      503,
      'sobrecarregado',
      `more than ${limit.limit} ${options.what} are under way in this instance; try again after ${retryAfter} s`,
      undefined,
      { 'Retry-After': retryAfter },
    );
  return (req, res, next) => {
    if (!limit.acquire()) {
      options.onShed?.();
      // Answered by the problem handler, unparsed: Node discards the body once the answer is sent.
      return next(refusal());
    }
    // The answer time counts from the body's end (from now when none is read): a client uploading
    // slowly is not the process answering slowly, and would cut the bound for every other client.
    let since = performance.now();
    req.once('end', () => {
      since = performance.now();
    });
    res.once('close', () => limit.release(res.writableFinished ? performance.now() - since : undefined));
    next();
  };
}

const AHEAD = Symbol('guards run ahead of admission');
/** On a request whose route has admission: its guards ran ahead, and what they refused (if they did). */
type Ahead = { [AHEAD]?: { refusal?: unknown } };

const unauthenticated = (error: unknown) => (error as { status?: unknown } | null)?.status === 401;

/**
 * What `createHttpApp` runs for a route with admission before anything reads the body: the route's
 * guards (the bearer token is in the headers), then the limiter. So a request without a valid token
 * never holds a slot: one that sends its body slowly, or never, cannot fill them and have honest
 * publications refused for overload (docs/decisions/admission-after-authentication.md).
 *
 * A 401 is answered at once, the body unread. Any other refusal of the guards (403: authenticated,
 * not allowed) takes no slot either, but is raised again where the guards stand in the route's own
 * chain (`guardsAfterAdmission`), after the body is read: a route that looks at the body of what it
 * refuses (hub-api records refused publications) still sees it.
 */
export function admissionChain(
  guards: RequestHandler[],
  limiter: RequestHandler,
): (RequestHandler | ErrorRequestHandler)[] {
  const passed: RequestHandler = (req, _res, next) => {
    (req as Ahead)[AHEAD] = {};
    next();
  };
  const deferred: ErrorRequestHandler = (error, req, _res, next) => {
    // The limiter's refusal (the guards passed), or no valid token: answered now.
    if ((req as Ahead)[AHEAD] || unauthenticated(error)) return next(error);
    (req as Ahead)[AHEAD] = { refusal: error };
    next();
  };
  return [...guards, passed, limiter, deferred];
}

/**
 * The guards in the route's own chain when the route has admission: when they ran ahead
 * (`admissionChain`) they are not run again, and a refusal of theirs is raised here; when they did
 * not (a router used outside `createHttpApp`), they run as usual.
 */
export function guardsAfterAdmission(guards: RequestHandler[]): RequestHandler[] {
  const refusal: RequestHandler = (req, _res, next) => next((req as Ahead)[AHEAD]?.refusal);
  return [
    refusal,
    ...guards.map(
      (guard): RequestHandler =>
        (req, res, next) =>
          (req as Ahead)[AHEAD] ? next() : guard(req, res, next),
    ),
  ];
}
