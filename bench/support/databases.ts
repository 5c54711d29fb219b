import { createRequire } from 'node:module';
import path from 'node:path';

const ADMIN_URL = process.env.DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const BENCH_PREFIX = 'hub_bench_';

interface PgClient {
  connect(): Promise<void>;
  query<T = { datname: string }>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
  end(): Promise<void>;
}

/** The workspace's own pg driver (a dependency of @hub/database), so the benchmark adds none. */
export function pgClient(url = ADMIN_URL): PgClient {
  const require = createRequire(path.resolve(__dirname, '../../packages/database/package.json'));
  const pg = require('pg') as { Client: new (options: { connectionString: string }) => PgClient };
  return new pg.Client({ connectionString: url });
}

/** Drops every database of earlier benchmark runs (the prefix is the benchmark's alone). */
export const dropBenchDatabases = () => dropDatabasesLike(BENCH_PREFIX);

/** Drops every database whose name starts with `prefix` (a benchmark's scratch databases). */
export async function dropDatabasesLike(prefix: string): Promise<void> {
  const client = pgClient();
  await client.connect();
  try {
    const { rows } = await client.query('select datname from pg_database where datname like $1', [`${prefix}%`]);
    for (const { datname } of rows)
      await client.query(`drop database if exists "${datname.replaceAll('"', '""')}" with (force)`);
  } finally {
    await client.end();
  }
}

/** A URL for one fresh database of this run; the services create and migrate it at start. */
export const benchDatabaseUrl = (run: string, name: string) => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${BENCH_PREFIX}${run}_${name}`;
  return url.toString();
};
