import { PrismaPg } from '@prisma/adapter-pg';

/** The driver adapter every service's PrismaClient is built with. */
export function prismaAdapter(url: string, max = 10): PrismaPg {
  return new PrismaPg({ connectionString: url, max });
}

/** True when Prisma reports a unique-key violation (P2002), optionally on a given field/index. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
}

/** A search text for Prisma's `contains` (SQL LIKE): its %, _ and \ match themselves, not anything. */
export const likeLiteral = (text: string) => text.replace(/[\\%_]/g, '\\$&');
