import { prismaAdapter } from '@hub/database';
import { type Prisma, PrismaClient } from './generated/prisma/client';

export type Db = PrismaClient;
/** The client or a transaction of it: repositories accept either. */
export type DbClient = PrismaClient | Prisma.TransactionClient;

export const createDb = (url: string, max = 10) => new PrismaClient({ adapter: prismaAdapter(url, max) });

/** Prisma's foreign-key violation (P2003): something still refers to the row. */
export const isForeignKeyViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2003';
