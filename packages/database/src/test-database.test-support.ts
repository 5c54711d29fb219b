import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { migrate, migrationFiles, withDatabase } from './migrate';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

async function templateName(prefix: string, migrationsDir: string): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await migrationFiles(migrationsDir)) {
    hash.update(file).update(await readFile(path.join(migrationsDir, file)));
  }
  return `${prefix}_tpl_${hash.digest('hex').slice(0, 12)}`;
}

/**
 * A fresh, migrated database for one test file. The migrations run once into a template database
 * (named by their hash, so a changed migration makes a new template); every test file then gets a
 * cheap copy with CREATE DATABASE … TEMPLATE. `adminUrl` names another server (a private one that a
 * test restarts); by default the shared test server.
 */
export async function createTestDatabase(
  prefix: string,
  migrationsDir: string,
  adminUrl = ADMIN_URL,
): Promise<TestDatabase> {
  const template = await templateName(prefix, migrationsDir);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query('select pg_advisory_lock(hashtext($1))', [template]);
    try {
      const exists = await admin.query('select 1 from pg_database where datname = $1', [template]);
      if (exists.rowCount === 0) {
        const building = `${template}_b`;
        await admin.query(`drop database if exists "${building}" with (force)`);
        await admin.query(`create database "${building}"`);
        await migrate(withDatabase(adminUrl, building), migrationsDir);
        await admin.query(`alter database "${building}" rename to "${template}"`);
      }
    } finally {
      await admin.query('select pg_advisory_unlock(hashtext($1))', [template]);
    }
    const name = `${prefix}_t_${randomBytes(5).toString('hex')}`;
    await admin.query(`create database "${name}" template "${template}"`);
    return { url: withDatabase(adminUrl, name), drop: () => dropDatabase(name, adminUrl) };
  } finally {
    await admin.end();
  }
}

/**
 * A database name of the test server that nothing has created yet, for a test of a service that
 * creates and migrates its own database at start. Drop it with `dropDatabase`.
 */
export function unusedTestDatabase(prefix: string): { name: string; url: string } {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  return { name, url: withDatabase(ADMIN_URL, name) };
}

export async function dropDatabase(name: string, adminUrl = ADMIN_URL): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${name.replaceAll('"', '""')}" with (force)`);
  } finally {
    await admin.end();
  }
}
