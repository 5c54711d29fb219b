import { AppError } from './errors';

/** Seconds a client is told to wait when the database is not answering (a restart takes a few). */
export const BANCO_RETRY_AFTER_S = 5;

const SOCKET = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
]);
/**
 * Class 08 (connection exception), 57P01–57P03 (shut down, crashed, not accepting yet), 53300 (too
 * many connections), 25006 (a write on a read-only server: a standby reached during a failover or
 * switchover, before the proxy or Service in front moved to the new primary; the pool drops that
 * connection, see criarPool).
 */
const SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300|25006)$/;
/** Prisma: cannot reach, timed out, server closed the connection, no pool connection in time. */
const PRISMA = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** What @prisma/adapter-pg reports for a socket or connection failure (`DriverAdapterError.cause.kind`). */
const ADAPTER = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
/**
 * node-postgres errors without a code, thrown when a connection dies under a query or a transaction,
 * or when a statement went unanswered past the pool's query_timeout (SqlPool's ESPERA_MAXIMA_MS); and
 * a read on a replica canceled by the replay of the primary's changes (SQLSTATE 40001, which alone
 * would also name a serialization failure: docs/decisions/read-replica.md).
 */
const MENSAGEM =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Query read timeout|canceling statement due to conflict with recovery)/;

/**
 * True when the error says the database could not be reached or the connection was lost (restart,
 * crash, failover, too many connections), not that a statement was wrong: what was asked may
 * succeed if sent again once the database is back. Reads node-postgres errors (socket codes,
 * SQLSTATE, its messages) and Prisma's, with @prisma/adapter-pg's cause under `meta`, by shape.
 */
export function bancoIndisponivel(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  const e = error as {
    code?: unknown;
    kind?: unknown;
    originalCode?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
    meta?: { driverAdapterError?: unknown };
  };
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code && (SOCKET.has(code) || SQLSTATE.test(code) || PRISMA.has(code))) return true;
  if (typeof e.originalCode === 'string' && SQLSTATE.test(e.originalCode)) return true;
  if (typeof e.kind === 'string' && ADAPTER.has(e.kind)) return true;
  if (typeof e.message === 'string' && MENSAGEM.test(e.message)) return true;
  const within = [e.meta?.driverAdapterError, e.cause, ...(Array.isArray(e.errors) ? e.errors : [])];
  return within.some((inner) => inner !== error && bancoIndisponivel(inner, depth + 1));
}

/**
 * The 503 every service answers while its database is not answering. A transaction either committed
 * whole or not at all; a publication sent again with the same Idempotency-Key is not recorded twice.
 */
export const bancoIndisponivelErro = () =>
  new AppError(
    503,
    'banco_indisponivel',
    'the database is not answering; send the request again after Retry-After',
    undefined,
    { 'Retry-After': String(BANCO_RETRY_AFTER_S) },
  );
