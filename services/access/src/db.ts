import { prismaAdapter } from '@hub/database';
import { type Prisma, PrismaClient } from './generated/prisma/client';

export type Db = PrismaClient;
/** The client or a transaction of it: repositories accept either, so a use case can join writes. */
export type DbClient = PrismaClient | Prisma.TransactionClient;
export type Tx = Prisma.TransactionClient;

export const createDb = (url: string) => new PrismaClient({ adapter: prismaAdapter(url) });

/**
 * Runs `work` in a transaction: a new one on the base client, or the caller's own when `db` is
 * already a transaction, so use cases compose without nesting (trigger.dev's `$transaction`).
 */
export function transaction<T>(db: DbClient, work: (tx: Tx) => Promise<T>): Promise<T> {
  return '$transaction' in db ? db.$transaction(work) : work(db);
}
