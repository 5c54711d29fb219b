import type { Decimal } from '@prisma/client/runtime/client';

/**
 * The PostgreSQL types a column may have for each JavaScript value Prisma's raw queries give back
 * (its driver adapter, unlike node-postgres's parsers): int8 as bigint, numeric as Prisma's Decimal,
 * json and jsonb parsed, timestamps and dates as Date, arrays as arrays of their elements (a
 * RowDescription names `int4[]` `_int4`). A column of type void (`pg_advisory_xact_lock`) cannot be
 * read through Prisma at all: such a statement is executed (`executeOnPrisma`), its columns `{}`.
 */
type PrismaScalarTypeOf<V> = V extends string
  ? 'text' | 'uuid' | 'varchar'
  : V extends bigint
    ? 'int8'
    : V extends number
      ? 'int2' | 'int4' | 'float4' | 'float8'
      : V extends boolean
        ? 'bool'
        : V extends Date
          ? 'timestamptz' | 'timestamp' | 'date'
          : V extends Decimal
            ? 'numeric'
            : 'json' | 'jsonb';

type PrismaTypeOf<V> = V extends readonly (infer E)[]
  ? `_${PrismaScalarTypeOf<NonNullable<E>>}` | 'json' | 'jsonb'
  : PrismaScalarTypeOf<V>;

/** `Columns<Row>` for a statement Prisma runs: each column of `Row` with the type Prisma gives that value. */
export type PrismaColumns<Row> = { [K in keyof Row]-?: PrismaTypeOf<NonNullable<Row[K]>> };

/**
 * A statement of fixed text run through a Prisma client or one of its interactive transactions
 * (`runOnPrisma`), where SqlPool cannot go: inside `transacao`, or beside Prisma's own calls. Sent
 * as an unnamed statement, its values bound parameters; declared and checked (`checkStatements`) as
 * SqlPool's statements are, its columns by Prisma's types.
 */
export interface PrismaStatement<Row> {
  via: 'prisma';
  /** Unique across the service, as SqlPool's names are (`checkStatements` says when two share one). */
  name: string;
  text: string;
  /** The type of each parameter, $1 first, as PostgreSQL infers it. */
  parameters: readonly string[];
  columns: PrismaColumns<Row>;
}

/** A statement for Prisma, as written beside its caller; its row type is the `Row` it is declared with. */
export function prismaStatement<Row extends object = Record<never, never>>(
  definition: Omit<PrismaStatement<Row>, 'via'>,
): PrismaStatement<Row> {
  return { via: 'prisma', ...definition };
}

/** What `runOnPrisma` needs of a generated Prisma client or of a transaction of it. */
export interface PrismaRaw {
  // biome-ignore lint/suspicious/noExplicitAny: Prisma's own signature (values: any[]).
  $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): PromiseLike<T>;
  // biome-ignore lint/suspicious/noExplicitAny: Prisma's own signature (values: any[]).
  $executeRawUnsafe(query: string, ...values: any[]): PromiseLike<number>;
}

function valuesFor(s: PrismaStatement<object>, values: readonly unknown[]): readonly unknown[] {
  if (values.length !== s.parameters.length) {
    throw new Error(`statement ${s.name} takes ${s.parameters.length} parameters, given ${values.length}`);
  }
  return values;
}

/** Runs a declared statement on a Prisma client or transaction, its values bound, $1 first; its rows. */
export async function runOnPrisma<Row extends object>(
  client: PrismaRaw,
  s: PrismaStatement<Row>,
  values: readonly unknown[] = [],
): Promise<Row[]> {
  return client.$queryRawUnsafe<Row[]>(s.text, ...valuesFor(s, values));
}

/** Executes a declared statement on a Prisma client or transaction; the number of rows it touched. */
export async function executeOnPrisma(
  client: PrismaRaw,
  s: PrismaStatement<object>,
  values: readonly unknown[] = [],
): Promise<number> {
  return client.$executeRawUnsafe(s.text, ...valuesFor(s, values));
}

/** Every service's readiness probe of its database, on its Prisma client (`runOnPrisma(db, PRONTIDAO)`). */
export const PRONTIDAO = prismaStatement<{ pronto: number }>({
  name: 'prontidao',
  text: 'select 1 as pronto',
  parameters: [],
  columns: { pronto: 'int4' },
});
