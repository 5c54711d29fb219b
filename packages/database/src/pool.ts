import type { Logger } from '@hub/log';
import pg from 'pg';

/**
 * How every pool of the platform connects. A database that does not answer at all (a host gone
 * from the network) fails a query after 10 s instead of holding it for ever (then 503
 * banco_indisponivel); TCP keep-alive finds a connection whose peer vanished without closing it.
 * A connection that breaks is dropped by its pool and the next query opens another, so the
 * pools come back by themselves once the database does.
 */
export const CONEXAO = {
  connectionTimeoutMillis: 10_000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
} as const;

/**
 * A node-postgres pool that never turns a broken connection into an unhandled 'error' event, which
 * would end the process.
 *
 * node-postgres leaves a gap: `await pool.connect()` takes the pool's listener off the client and
 * resolves a promise, and until the caller's code runs (a microtask later) the client has no
 * listener at all. When the event loop is busy, the end of a new connection's start-up and the
 * server's 57P01 (a restart, `pg_terminate_backend`) arrive in one read and are parsed in one go:
 * the error is emitted inside that gap. Prisma's transactions and the outbox relay's batches take
 * their clients this way. So every client gets a listener of its own for its whole life, added when
 * it connects; the error still reaches whoever uses the client, as its next query's failure
 * ("not queryable"), and the pool drops the client when it comes back
 * (docs/decisions/database-pools.md).
 */
export function criarPool(config: pg.PoolConfig, logger?: Logger, nome = 'database'): pg.Pool {
  const pool = new pg.Pool({ ...CONEXAO, ...config });
  // An idle connection that breaks (database restarted) is dropped; the next query opens another.
  pool.on('error', (error) => logger?.warn({ err: error, pool: nome }, 'idle database connection failed'));
  pool.on('connect', (client) => {
    client.on('error', (error) => logger?.debug({ err: error, pool: nome }, 'database connection failed'));
    derrubarAoFalhar(client);
  });
  return pool;
}

/** node-postgres's message when a statement went unanswered past its query_timeout. */
const TEMPO_ESGOTADO = 'Query read timeout';
/** SQLSTATE read_only_sql_transaction: a write sent to a standby. */
const SOMENTE_LEITURA = '25006';

/** Whether the connection a statement failed on must not serve another one. */
function conexaoPerdida(error: unknown): boolean {
  const e = error as { message?: unknown; code?: unknown } | undefined;
  return e?.message === TEMPO_ESGOTADO || e?.code === SOMENTE_LEITURA;
}

/**
 * A connection whose statement failed so that nothing more should run on it is ended at once, and
 * the pool drops it: the statement ran out of its query_timeout, or the server is a standby (25006,
 * a write refused as read-only). The second is a failover seen from a pool: its URL names a proxy or
 * a Service that follows the primary (HAProxy on Patroni's /primary, CloudNativePG's -rw), and a
 * connection opened while the proxy still took the former primary for the primary (a switchover:
 * it comes back as a standby within seconds) would otherwise stay in the pool, refusing every write
 * until the proxy cuts it (docs/decisions/postgresql-failover.md); the next connection reaches the
 * new primary.
 *
 * A statement that ran out of its query_timeout ends its connection at once. node-postgres only
 * stops waiting: the statement stays under way on the server, the connection stays "queryable", and
 * a later statement on it that also times out is dropped from its queue unsent. A transaction's
 * ROLLBACK is dropped so, the holder (Prisma's adapter) gives the client back to the pool as sound,
 * and the next user of that connection runs its statements inside the abandoned transaction, its
 * own writes never committed, or committed with the abandoned ones by its COMMIT. With the
 * connection ended, everything queued on it fails at once ("Connection terminated"), the pool drops
 * the client when it comes back, and the server rolls the open transaction back
 * (docs/decisions/database-pools.md).
 */
function derrubarAoFalhar(client: pg.PoolClient): void {
  const consultar = client.query as (...args: unknown[]) => unknown;
  const derrubar = (error: unknown) => {
    // end() marks the client as ending at once (the pool drops it when it comes back) and, with a
    // statement still under way, destroys its socket rather than waiting for it.
    if (conexaoPerdida(error)) client.end().catch(() => undefined);
  };
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const ultimo = args.length - 1;
    const callback = args[ultimo];
    if (typeof callback === 'function') {
      args[ultimo] = (error: unknown, result: unknown) => {
        derrubar(error);
        callback(error, result);
      };
      return consultar.apply(client, args);
    }
    const resultado = consultar.apply(client, args);
    return resultado instanceof Promise
      ? resultado.catch((error: unknown) => {
          derrubar(error);
          throw error;
        })
      : resultado;
  };
}
