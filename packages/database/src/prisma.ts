import { PrismaPg } from '@prisma/adapter-pg';
import { criarPool } from './pool';

/**
 * How long a statement through Prisma may go unanswered before it fails (503 banco_indisponivel) and
 * its connection is ended (`criarPool`). Longer than SqlPool's 10 s: the panel's reads and
 * retention's batches go through Prisma and take more than the hot path's statements (the slowest
 * measured at 1,000,000 events, well under a second); no longer than the gateway waits for a service
 * (GATEWAY_UPSTREAM_TIMEOUT, 30 s), after which nobody is waiting for the answer.
 */
export const ESPERA_PRISMA_MS = 30_000;

/**
 * The driver adapter every service's PrismaClient is built with, on a pool of ours: the adapter's
 * own pool would leave a client without an 'error' listener while a transaction takes it, and
 * would wait for ever on a database that hangs (`criarPool`). Disconnecting the client ends the pool.
 */
export function prismaAdapter(url: string, max = 10, esperaMaxima = ESPERA_PRISMA_MS): PrismaPg {
  return new PrismaPg(criarPool({ connectionString: url, max, query_timeout: esperaMaxima }, undefined, 'prisma'), {
    disposeExternalPool: true,
  });
}

/**
 * The options of every service's PrismaClient: the driver adapter, and `errorFormat: 'minimal'`.
 * Any other format (Prisma's default unless NODE_ENV is production, which neither `pnpm start` nor
 * the image sets) records a call site at every query and, at every error, reads the calling file
 * whole to quote it: a service's bundle, 9 MB read and split on the event loop, about 170 ms per
 * failed query on a busy machine. With the database down every request fails a query, so hub-api
 * answered nothing, its readiness and /metrics included (docs/benchmarks.md, "Operator drill").
 */
export function prismaOptions(url: string, max = 10) {
  return { adapter: prismaAdapter(url, max), errorFormat: 'minimal' as const };
}

const prismaCode = (error: unknown) =>
  typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;

/** True when Prisma reports a unique-key violation (P2002). */
export const isUniqueViolation = (error: unknown) => prismaCode(error) === 'P2002';

/** True when Prisma reports a foreign-key violation (P2003): something still refers to the row. */
export const isForeignKeyViolation = (error: unknown) => prismaCode(error) === 'P2003';

export interface TransactionOptions {
  isolationLevel?: 'ReadUncommitted' | 'ReadCommitted' | 'RepeatableRead' | 'Serializable';
  timeout?: number;
}

/** What `transacao` needs of a generated Prisma client. */
export interface TransactionalClient<Tx> {
  $connect(): Promise<void>;
  $transaction<R>(work: (tx: Tx) => Promise<R>, options?: TransactionOptions): Promise<R>;
}

/**
 * Runs `work` in a transaction opened where the use case starts; given a transaction already (a use
 * case called by a larger one, such as a publication writing an event, its deliveries and outbox
 * rows), it runs in that one, so the whole commits or rolls back together. Only the base client can
 * connect: Prisma 7 gives transaction clients a nested `$transaction` of their own, so that is not
 * the test.
 */
export function transacao<Tx, R>(
  cliente: TransactionalClient<Tx> | Tx,
  work: (tx: Tx) => Promise<R>,
  options?: TransactionOptions,
): Promise<R> {
  const base = typeof cliente === 'object' && cliente !== null && '$connect' in cliente;
  return base ? (cliente as TransactionalClient<Tx>).$transaction(work, options) : work(cliente as Tx);
}

/** A search text for Prisma's `contains` (SQL LIKE): its %, _ and \ match themselves, not anything. */
export const likeLiteral = (text: string) => text.replace(/[\\%_]/g, '\\$&');

/**
 * The database refused the data itself (SQLSTATE class 22, data exception, e.g. a NUL in a text;
 * or 23, an integrity violation): trying the same write again cannot help. Consumers treat it as a
 * final failure, so the message is dead-lettered at once instead of retried.
 */
export function dadosRecusados(error: unknown): boolean {
  const meta = (error as { meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } })?.meta;
  // Through Prisma's adapter, or straight from node-postgres (SqlPool): its error's `code`.
  const sqlState = meta?.driverAdapterError?.cause?.originalCode ?? (error as { code?: unknown })?.code;
  return typeof sqlState === 'string' && /^2[23]/.test(sqlState);
}
