import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { AppError, badRequest, type ErroDeValidacao, MAX_ERROS, unprocessable } from './errors';
import { pointer } from './validation';

/**
 * The guard every request passes before any route sees it (createHttpApp installs it, so no route
 * can forget it): text that PostgreSQL cannot hold (NUL) or that is not Unicode (lone surrogates,
 * bytes that are not UTF-8), `__proto__` keys, numbers JSON.parse made infinite, and bodies nested deeper than
 * MAX_BODY_DEPTH are refused with a 4xx before they can become a 500 or be stored changed.
 */

declare global {
  namespace Express {
    interface Request {
      /**
       * The JSON body exactly as received (set by express.json's verify): for routes that must keep
       * what JSON.parse changes, such as the digits of a 20-digit integer in event dados.
       */
      rawBody?: Buffer;
      /**
       * `rawBody` decoded, its byte order mark dropped: the text JSON.parse read, when the frame
       * had it at hand (the fast path); absent otherwise (decode rawBody then).
       */
      rawText?: string;
    }
  }
  interface String {
    /** ES2024; Node 20 has it, the project's lib (es2023) does not declare it yet. */
    isWellFormed(): boolean;
  }
}

/**
 * Deepest nesting of arrays and objects a body may have. Event `dados` are nested, so the bound is
 * generous; it exists because zod, JSON.stringify and Prisma recurse and a 100,000-deep body (which
 * fits in 1 MB) would overflow their stack.
 */
export const MAX_BODY_DEPTH = 256;

const NUL = 'must not contain the NUL character (U+0000)';
const LONE_SURROGATE = 'must not contain a lone surrogate (text that is not Unicode)';
const NOT_FINITE = 'must be a finite number (this one is too large)';
// JSON.parse makes "__proto__" an own key; code that copies objects key by key (Prisma's JSON
// serialisation among it) turns it into a prototype. Refused as Fastify refuses it by default.
const PROTO = '__proto__';
const PROTO_KEY = 'must not be __proto__';

/** Why a string or number cannot be stored as it is, or undefined when it can (or is neither). */
function scalarProblem(value: unknown): string | undefined {
  if (typeof value === 'string') {
    if (value.includes('\0')) return NUL;
    return value.isWellFormed() ? undefined : LONE_SURROGATE;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : NOT_FINITE;
  return undefined;
}

/**
 * The path of the request, and its query, must percent-decode to UTF-8 without NUL. Express would
 * otherwise throw URIError on a param (a 500), and the 'simple' query parser silently turns bad
 * bytes into U+FFFD. Requests without '%' cannot break either rule, so they cost one scan.
 */
export const urlGuard: RequestHandler = (req, _res, next) => {
  const url = req.url;
  if (!url.includes('%')) return next();
  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  const query = mark === -1 ? '' : url.slice(mark + 1);
  const pathProblem = percentProblem(path);
  if (pathProblem) throw badRequest('caminho_invalido', `the path ${pathProblem}`);
  const queryProblem = percentProblem(query);
  if (queryProblem) throw badRequest('consulta_invalida', `the query ${queryProblem}`);
  next();
};

function percentProblem(part: string): string | undefined {
  if (!part.includes('%')) return undefined;
  let decoded: string;
  try {
    // A UTF-8 sequence cannot straddle a literal '&', '=' or '/', so decoding the whole part is
    // as strict as decoding each name, value or segment, and cheaper.
    decoded = decodeURIComponent(part);
  } catch {
    return 'has percent-encoding that does not decode to UTF-8';
  }
  // decodeURIComponent never yields a lone surrogate; NUL is the one character left to refuse.
  return decoded.includes('\0') ? 'must not contain the NUL character (%00)' : undefined;
}

/**
 * For express.json's `verify`: a body that is not UTF-8 would be decoded with U+FFFD in place of
 * the bad bytes and stored changed without a word.
 */
export function verifyUtf8(req: IncomingMessage, _res: unknown, body: Buffer, encoding: string | null): void {
  if (encoding === 'utf-8' && !isUtf8(body)) {
    throw new AppError(400, 'json_invalido', 'the body is not valid UTF-8');
  }
  // Keeps a reference (no copy) for routes that need the exact text; only UTF-8 bodies, whose
  // text is what the client wrote.
  if (encoding === 'utf-8') (req as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
}

/** Refuses a parsed JSON body holding what hostileValues finds, with 422 and every caminho. */
export const bodyGuard: RequestHandler = (req, _res, next) => {
  if (typeof req.body === 'object' && req.body !== null) {
    const erros = hostileValues(req.body);
    if (erros.length > 0) {
      throw unprocessable('dados_invalidos', 'the body holds values that cannot be stored as sent', erros);
    }
  }
  next();
};

interface Container {
  value: object;
  parent: Container | undefined;
  key: string | number | undefined;
  depth: number;
}

function pathOf(container: Container, key?: string | number): string {
  const path: (string | number)[] = key === undefined ? [] : [key];
  for (let at: Container | undefined = container; at?.parent; at = at.parent) path.push(at.key as string | number);
  return pointer(path.reverse());
}

/**
 * Every string (values and object keys) with NUL or a lone surrogate, every non-finite number and
 * every container nested deeper than MAX_BODY_DEPTH, as JSON Pointers, at most MAX_ERROS. Walks with
 * an explicit stack (a deep body cannot overflow it), keeps a frame only per container and builds a
 * pointer only for what it refuses: this runs on every body.
 */
export function hostileValues(body: object): ErroDeValidacao[] {
  const erros: ErroDeValidacao[] = [];
  const stack: Container[] = [{ value: body, parent: undefined, key: undefined, depth: 1 }];
  const visit = (container: Container, key: string | number, item: unknown) => {
    if (typeof item === 'object' && item !== null) {
      stack.push({ value: item, parent: container, key, depth: container.depth + 1 });
      return;
    }
    const problem = scalarProblem(item);
    if (problem) erros.push({ caminho: pathOf(container, key), mensagem: problem });
  };
  while (stack.length > 0 && erros.length < MAX_ERROS) {
    const container = stack.pop() as Container;
    if (container.depth > MAX_BODY_DEPTH) {
      erros.push({ caminho: pathOf(container), mensagem: `must not be nested deeper than ${MAX_BODY_DEPTH} levels` });
      continue;
    }
    const value = container.value as Record<string, unknown>;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) visit(container, index, value[index]);
      continue;
    }
    // for…in allocates no key array; JSON.parse makes plain objects, so it sees exactly their keys.
    for (const key in value) {
      const problem = key === PROTO ? PROTO_KEY : scalarProblem(key);
      if (problem) erros.push({ caminho: pathOf(container, key), mensagem: `the field name ${problem}` });
      visit(container, key, value[key]);
    }
  }
  return erros.slice(0, MAX_ERROS);
}
