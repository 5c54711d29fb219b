import { prismaAdapter } from '@hub/database';
import { PrismaClient } from './generated/prisma/client';

export type Db = PrismaClient;

export const createDb = (url: string) => new PrismaClient({ adapter: prismaAdapter(url) });
