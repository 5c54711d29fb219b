import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '@hub/log';
import pg from 'pg';
import Postgrator from 'postgrator';

/** The database name of a postgresql:// URL. */
export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

export function withDatabase(url: string, database: string): string {
  const next = new URL(url);
  next.pathname = `/${encodeURIComponent(database)}`;
  return next.toString();
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Creates the database of the URL when it does not exist yet (connecting to `postgres`). */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  // A connection dropped between queries (the server restarting) must fail the start, not crash it
  // with an unhandled 'error': the query under way or the next one rejects on its own.
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await admin.query(`create database ${quoteIdent(name)}`).catch((error: { code?: string }) => {
        // Created meanwhile by another process: 42P04, or 23505 when both inserted the catalog row at once.
        if (error.code !== '42P04' && error.code !== '23505') throw error;
      });
    }
  } finally {
    await admin.end();
  }
}

/**
 * Applies the SQL migrations of a folder (`001.do.what.sql`, …) with postgrator. An advisory lock
 * makes two instances starting together take turns instead of racing.
 */
export async function migrate(url: string, migrationsDir: string, logger?: Logger): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined); // as in ensureDatabase
  await client.connect();
  try {
    await client.query('select pg_advisory_lock(4242001)');
    const postgrator = new Postgrator({
      migrationPattern: path.join(migrationsDir, '*.sql'),
      driver: 'pg',
      database: databaseName(url),
      schemaTable: 'schema_migrations',
      execQuery: (query: string) => client.query(query),
    });
    const applied = await postgrator.migrate();
    if (applied.length > 0) logger?.info({ applied: applied.map((m) => m.filename) }, 'migrations applied');
    return applied.length;
  } finally {
    await client.query('select pg_advisory_unlock(4242001)').catch(() => undefined);
    await client.end();
  }
}

export async function migrationFiles(migrationsDir: string): Promise<string[]> {
  return (await readdir(migrationsDir)).filter((file) => file.endsWith('.sql')).sort();
}
