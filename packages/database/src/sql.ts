import type { Logger } from '@hub/log';
import type pg from 'pg';
import { criarPool } from './pool';
import type { Statement } from './statement';

/**
 * How long one of these statements may go unanswered: then it fails ("Query read timeout", 503
 * banco_indisponivel) and its connection is ended (criarPool). A database that hangs
 * without closing anything (a stalled host, a frozen VM, processes stopped) answers nothing, and
 * TCP keep-alive cannot tell: its kernel still answers. Without it, publication's group write and
 * the worker's claims waited for ever, and every publication with them. These statements take
 * milliseconds; the same limit as the pools' connection timeout (CONEXAO). Prisma's statements
 * have a longer one (ESPERA_PRISMA_MS).
 */
export const ESPERA_MAXIMA_MS = 10_000;

/**
 * The statements of a hot path (publication's group write, the delivery worker's claim and record),
 * sent through node-postgres as NAMED prepared statements: each connection parses one once, and
 * after its first few runs PostgreSQL reuses a generic plan (these statements' parameters are arrays
 * or JSON, whose contents a custom plan cannot use anyway), where Prisma's raw queries go as unnamed
 * statements, parsed and planned on every call. For these statements (CTEs over a JSON or array
 * parameter, tables with many indexes) planning cost as much as running them: 0.4–0.8 ms a call,
 * 40 % of the database's time under the end-to-end benchmark (docs/benchmarks.md). Everything
 * else keeps using Prisma.
 *
 * A name must always go with the same text (the statement is prepared under it on each connection).
 *
 * Their connections plan without sequential scans (`enable_seqscan=off`). A generic plan is kept
 * until the table's statistics change, and one made while `entrega` held a few pages scans it whole:
 * after a burst of 100,000 deliveries a claim took 20–40 ms instead of 0.5, until autovacuum's next
 * ANALYZE (up to a minute), and the worker's throughput fell with it (docs/decisions/hot-statements-prepared.md). Each of these statements reaches its rows by key, so an index is right at any
 * size; a statement with no index to use still gets its sequential scan.
 */
export class SqlPool {
  private readonly pool: pg.Pool;

  constructor(url: string, max = 4, logger?: Logger) {
    this.pool = criarPool(
      { connectionString: url, max, options: '-c enable_seqscan=off', query_timeout: ESPERA_MAXIMA_MS },
      logger,
      'sql',
    );
  }

  /** Runs a declared statement (statement.ts) with its parameters, $1 first; the rows it returns. */
  async run<Row extends object>(s: Statement<Row>, values: unknown[]): Promise<Row[]> {
    if (values.length !== s.parameters.length) {
      throw new Error(`statement ${s.name} takes ${s.parameters.length} parameters, given ${values.length}`);
    }
    return this.consultar<Row>(s.name, s.text, values);
  }

  /** Runs the statement prepared under `nome` with these parameters; the rows it returns. */
  async consultar<T extends object>(nome: string, texto: string, valores: unknown[]): Promise<T[]> {
    return (await this.pool.query<T>({ name: nome, text: texto, values: valores })).rows;
  }

  async fechar(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
