import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import pg from 'pg';
import { OUTBOX_MIGRATIONS_DIR } from './table';

/**
 * Services copy sql/001.do.outbox.sql into their own migrations (a migration applied somewhere is never
 * edited, so they cannot include it). This checks that every copy still makes the same table: the
 * catalog of the migrated databases is compared, not the text, so comments and layout may differ.
 */

const ROOT = path.resolve(__dirname, '../../..');

/** Services that use the outbox: they depend on @hub/outbox or their migrations create the table. */
/**
 * Services and packages whose migrations create an outbox table (hub_events' migrations live in
 * @hub/hub-data, which hub-api and the delivery worker share), or that depend on @hub/outbox and
 * have migrations of their own.
 */
function ownersOfAnOutbox(): string[] {
  return ['services', 'packages'].flatMap((folder) =>
    readdirSync(path.join(ROOT, folder))
      .map((name) => `${folder}/${name}`)
      .filter((owner) => {
        const dir = path.join(ROOT, owner);
        if (owner === 'packages/outbox' || !readdirSync(dir).includes('migrations')) return false;
        const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
        const dependsOnOutbox = '@hub/outbox' in { ...manifest.dependencies, ...manifest.devDependencies };
        const migrations = path.join(dir, 'migrations');
        const createsOutbox = readdirSync(migrations).some((file) =>
          /create\s+table\s+(if\s+not\s+exists\s+)?(public\.)?outbox\s*\(/i.test(
            readFileSync(path.join(migrations, file), 'utf8'),
          ),
        );
        return dependsOnOutbox || createsOutbox;
      }),
  );
}

/** What PostgreSQL knows of the outbox table: columns, constraints, indexes, triggers and their functions. */
async function outboxCatalog(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = async (sql: string) => (await client.query(sql)).rows;
    return {
      columns: await rows(`
        select ordinal_position, column_name, data_type, udt_name, is_nullable, column_default,
               character_maximum_length, numeric_precision, datetime_precision, collation_name
          from information_schema.columns
         where table_schema = 'public' and table_name = 'outbox'
         order by ordinal_position`),
      constraints: await rows(`
        select conname, contype, pg_get_constraintdef(c.oid) as definition
          from pg_constraint c
         where c.conrelid = 'public.outbox'::regclass
         order by conname`),
      indexes: await rows(`
        select indexname, indexdef from pg_indexes
         where schemaname = 'public' and tablename = 'outbox'
         order by indexname`),
      triggers: await rows(`
        select trigger_name, event_manipulation, action_timing, action_orientation, action_statement
          from information_schema.triggers
         where event_object_schema = 'public' and event_object_table = 'outbox'
         order by trigger_name, event_manipulation`),
      triggerFunctions: await rows(`
        select p.proname, l.lanname, regexp_replace(btrim(p.prosrc), '\\s+', ' ', 'g') as source
          from pg_trigger t
          join pg_proc p on p.oid = t.tgfoid
          join pg_language l on l.oid = p.prolang
         where t.tgrelid = 'public.outbox'::regclass and not t.tgisinternal
         order by p.proname`),
    };
  } finally {
    await client.end();
  }
}

const databases: TestDatabase[] = [];
async function migrated(prefix: string, migrationsDir: string): Promise<string> {
  const database = await createTestDatabase(prefix, migrationsDir);
  databases.push(database);
  return database.url;
}

let reference: Awaited<ReturnType<typeof outboxCatalog>>;
beforeAll(async () => {
  reference = await outboxCatalog(await migrated('outbox', OUTBOX_MIGRATIONS_DIR));
});
afterAll(async () => {
  await Promise.all(databases.map((database) => database.drop()));
});

describe('copies of the outbox DDL', () => {
  it('When the package SQL is migrated, then its catalog holds the table, its key, its three indexes and the trigger', () => {
    expect(reference.columns.map((c) => c.column_name)).toContain('publicado_em');
    expect(reference.constraints).toEqual([expect.objectContaining({ contype: 'p' })]);
    expect(reference.indexes.map((i) => i.indexname)).toEqual([
      'outbox_mensagem',
      'outbox_pendente',
      'outbox_pkey',
      'outbox_publicado',
    ]);
    expect(reference.triggers).toEqual([expect.objectContaining({ trigger_name: 'outbox_inserido' })]);
  });

  it('When the services and packages are read, then those with an outbox include function and hub-data', () => {
    expect(ownersOfAnOutbox()).toEqual(expect.arrayContaining(['services/function', 'packages/hub-data']));
  });

  it.each(ownersOfAnOutbox())(
    'When the migrations of %s are applied, then its outbox table agrees with the package SQL in every column, default, constraint, index and trigger',
    async (owner) => {
      const name = owner.slice(owner.indexOf('/') + 1);
      const url = await migrated(`${name.replaceAll('-', '_').slice(0, 8)}_ob`, path.join(ROOT, owner, 'migrations'));
      expect(await outboxCatalog(url)).toEqual(reference);
    },
  );
});
