import path from 'node:path';
import { prismaOptions } from '@hub/database';
import { type Prisma, PrismaClient } from './generated/prisma/client';

/**
 * The data of the hub (database `hub_events`): its SQL migrations, its Prisma schema and the
 * generated client. hub-api and the delivery worker are two deployables of one hub and both use
 * this package; neither imports the other (architecture §1).
 */

export type * from './generated/prisma/client';
export { Prisma } from './generated/prisma/client';

/** The SQL migrations of `hub_events`, applied by `migrate` of `@hub/database` under its advisory lock. */
export const HUB_DATA_MIGRATIONS_DIR = path.join(__dirname, '..', 'migrations');

export type Db = PrismaClient;
/** An interactive transaction of the client. */
export type Tx = Prisma.TransactionClient;
/** The client or a transaction of it: every repository function takes either, so use cases compose. */
export type DbClient = Db | Tx;

export const createDb = (url: string, max = 10): Db => new PrismaClient(prismaOptions(url, max));
export * from './duracoes';

/**
 * The channel on which every write of applications, event types, schema versions and subscriptions
 * is announced at commit (migration 011, a trigger per table; payload: the table's name).
 */
export const CANAL_DO_REGISTRO = 'registro_alterado';
export * from './resumo';
export * from './latencia';
