import pg from 'pg';
import { describe } from './describe';
import type { PrismaStatement } from './prisma-statement';

/**
 * The PostgreSQL types a column may have for each JavaScript value node-postgres gives back (its
 * default parsers): bigint and numeric come as text, json and jsonb parsed, timestamps as Date.
 */
type PgTypeOf<V> = V extends string
  ? 'text' | 'uuid' | 'varchar' | 'int8' | 'numeric'
  : V extends number
    ? 'int2' | 'int4' | 'float4' | 'float8'
    : V extends boolean
      ? 'bool'
      : V extends Date
        ? 'timestamptz' | 'timestamp'
        : 'json' | 'jsonb';

/**
 * Each column of the row type `Row`, with the PostgreSQL type the statement gives it. The compiler
 * holds it to `Row` (every key, none more, a type that gives that value); `checkStatements` holds it
 * to the migrated database. A union of literals (a `situacao`) is text; nullability is not checked
 * (PostgreSQL does not say which result columns can be null).
 */
export type Columns<Row> = { [K in keyof Row]-?: PgTypeOf<NonNullable<Row[K]>> };

/**
 * One hot statement (docs/decisions/hot-statements-prepared.md): sent as a NAMED prepared
 * statement through `SqlPool`, its text fixed for its name, the types of its parameters and of its
 * row declared beside it and checked against the migrated database by each service's statements test.
 */
export interface Statement<Row> {
  /** SqlPool's (node-postgres's types): a statement for Prisma (`via: 'prisma'`) is not one. */
  via?: 'pg';
  name: string;
  text: string;
  /** The type of each parameter, $1 first, as PostgreSQL names it (`pg_prepared_statements`). */
  parameters: readonly string[];
  columns: Columns<Row>;
}

/** A statement, as written beside its caller; its row type is the `Row` it is declared with. */
export function statement<Row extends object>(definition: Statement<Row>): Statement<Row> {
  return definition;
}

/** Where a statement and the database disagree. */
export interface StatementMismatch {
  name: string;
  problem: string;
}

/** Any declared statement: SqlPool's (`statement`) or Prisma's (`prismaStatement`). */
export type DeclaredStatement = Statement<object> | PrismaStatement<object>;

/**
 * Checks every statement against a migrated database: PostgreSQL parses and describes it, and the
 * parameters' types it infers and the row's columns and their types (its RowDescription) are
 * compared with what the statement declares; then it runs once, with NULL for each parameter, in a
 * transaction rolled back. A statement that no longer parses (a column renamed by a migration) is
 * a mismatch, and so is one that fails when run but for an integrity violation (SQLSTATE class 23:
 * NULL into a NOT NULL column is no fault of the statement). Two statements of one name are too.
 */
export async function checkStatements(url: string, statements: DeclaredStatement[]): Promise<StatementMismatch[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const mismatches: StatementMismatch[] = [];
  try {
    const types = new Map<number, string>(
      (await client.query<{ oid: number; typname: string }>('select oid::int, typname from pg_type')).rows.map((t) => [
        t.oid,
        t.typname,
      ]),
    );
    const names = new Set<string>();
    for (const s of statements) {
      const problem = names.has(s.name) ? 'another statement has this name' : await checkOne(client, types, s);
      names.add(s.name);
      if (problem) mismatches.push({ name: s.name, problem });
    }
  } finally {
    await client.end();
  }
  return mismatches;
}

/** A type's name as statements declare it: `_int4`, as pg_type names the array, is `int4[]`. */
const typeName = (types: Map<number, string>, oid: number) => {
  const name = types.get(oid) ?? String(oid);
  return name.startsWith('_') ? `${name.slice(1)}[]` : name;
};

async function checkOne(client: pg.Client, types: Map<number, string>, s: DeclaredStatement) {
  await client.query('begin');
  try {
    const found = await describe(client, s.text);
    const parameters = found.parameters.map((oid) => shortName(typeName(types, oid)));
    if (parameters.join(',') !== s.parameters.map(shortName).join(',')) {
      return `parameters are (${parameters.join(', ')}), declared (${s.parameters.join(', ')})`;
    }
    const actual = found.fields.map((f) => `${f.name} ${types.get(f.dataTypeID) ?? f.dataTypeID}`).sort();
    const declared = Object.entries(s.columns as Record<string, string>)
      .map(([name, type]) => `${name} ${type}`)
      .sort();
    if (actual.join(',') !== declared.join(',')) {
      return `columns are (${actual.join(', ')}), declared (${declared.join(', ')})`;
    }
    await client.query({ text: s.text, values: s.parameters.map(() => null) }).catch((error: { code?: string }) => {
      if (!String(error.code).startsWith('23')) throw error;
    });
    return undefined;
  } catch (error) {
    return `does not run: ${(error as Error).message}`;
  } finally {
    await client.query('rollback').catch(() => undefined);
  }
}

/** format_type's long names as the short ones statements declare (`integer` is `int4`). */
function shortName(type: string): string {
  const names: Record<string, string> = {
    integer: 'int4',
    bigint: 'int8',
    smallint: 'int2',
    boolean: 'bool',
    'timestamp with time zone': 'timestamptz',
    'timestamp without time zone': 'timestamp',
    'character varying': 'varchar',
    'double precision': 'float8',
    real: 'float4',
  };
  const array = type.endsWith('[]');
  const base = array ? type.slice(0, -2) : type;
  return `${names[base] ?? base}${array ? '[]' : ''}`;
}

/** The declared statements a module exports (a `*.sql.ts` imported whole), for its service's statements test. */
export function statementsOf(...modules: object[]): DeclaredStatement[] {
  return modules.flatMap((m) =>
    Object.values(m).filter(
      (v): v is DeclaredStatement => typeof v === 'object' && v !== null && 'text' in v && 'columns' in v,
    ),
  );
}
