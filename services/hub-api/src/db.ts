import { prismaAdapter } from '@hub/database';
import { type Prisma, PrismaClient } from './generated/prisma/client';

export type Db = PrismaClient;
/** An interactive transaction of the client. */
export type Tx = Prisma.TransactionClient;
/** The client or a transaction of it: every repository function takes either, so use cases compose. */
export type DbClient = Db | Tx;

export const createDb = (url: string, max = 10) => new PrismaClient({ adapter: prismaAdapter(url, max) });

/**
 * Runs `fn` in a transaction opened where the use case starts; given a transaction already (a use
 * case called by a larger one, such as a publication writing an event, its deliveries and outbox
 * rows), it runs in that one, so the whole commits or rolls back together.
 */
export function transacao<R>(
  cliente: DbClient,
  fn: (tx: Tx) => Promise<R>,
  options?: { isolationLevel?: Prisma.TransactionIsolationLevel; timeout?: number },
): Promise<R> {
  // Only the base client can connect. (Prisma 7 gives transaction clients a $transaction of their
  // own, nested, with other rules; joining the caller's transaction is the simpler contract.)
  return '$connect' in cliente ? (cliente as Db).$transaction(fn, options) : fn(cliente);
}

/** Prisma's foreign-key violation (P2003): something still refers to the row. */
export const isForeignKeyViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2003';
