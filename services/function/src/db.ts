import { prismaOptions } from '@hub/database';
import { type Prisma, PrismaClient } from './generated/prisma/client';

export { transacao } from '@hub/database';

export type Db = PrismaClient;
/** An interactive transaction of the client. */
export type Tx = Prisma.TransactionClient;
/** The client or a transaction of it: every repository function takes either, so use cases compose. */
export type DbClient = Db | Tx;

export const createDb = (url: string, max = 10) => new PrismaClient(prismaOptions(url, max));
