import { prismaOptions } from '@hub/database';
import { type Prisma, PrismaClient } from './generated/prisma/client';

export { transacao } from '@hub/database';

export type Db = PrismaClient;
/** An interactive transaction of the client. */
export type Tx = Prisma.TransactionClient;
/** The client or a transaction of it: repositories accept either, so a use case can join writes. */
export type DbClient = Db | Tx;

export const createDb = (url: string) => new PrismaClient(prismaOptions(url));
