import type { RequestHandler } from 'express';
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
}

/**
 * Admission control: at most `max` of the matching requests under way at once in the process, from
 * their arrival to the end of their answer. One more is answered before its body is read: 503
 * `sobrecarregado` with Retry-After, nothing done, so an overload costs the refused requests nothing
 * and the accepted ones wait in a bounded queue (bounded memory, bounded latency) instead of one that
 * grows as long as the overload lasts. Clients retry after Retry-After (as @hub/client does).
 *
 * Declared on the routes it is for (`admission` of their RouteSpec); `createHttpApp` runs it for
 * them ahead of the body parser. One limiter on several routes counts their requests together.
 */
export function admission(options: AdmissionOptions): RequestHandler {
  let underWay = 0;
  const retryAfter = String(options.retryAfterSeconds ?? 1);
  const refusal = new AppError(
    503,
    'sobrecarregado',
    `more than ${options.max} ${options.what} are under way in this instance; try again after ${retryAfter} s`,
    undefined,
    { 'Retry-After': retryAfter },
  );
  return (_req, res, next) => {
    if (underWay >= options.max) {
      options.onShed?.();
      // Answered by the problem handler, unparsed: Node discards the body once the answer is sent.
      return next(refusal);
    }
    underWay += 1;
    res.once('close', () => {
      underWay -= 1;
    });
    next();
  };
}
