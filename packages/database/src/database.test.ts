import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { uuidv7 } from './ids';
import { ensureDatabase, migrate } from './migrate';
import { likeLiteral } from './prisma';
import { dropDatabase, unusedTestDatabase } from './test-database';

describe('uuidv7', () => {
  it('When many ids are made in one millisecond, then they are valid v7 and strictly increasing', () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('When made later, then it sorts after, and its first 48 bits are the time', () => {
    const id = uuidv7(Date.UTC(2026, 10, 21));
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBeGreaterThanOrEqual(Date.UTC(2026, 10, 21));
  });
});

describe('likeLiteral', () => {
  it('escapes the LIKE wildcards and the escape character', () => {
    expect(likeLiteral('50%_a\\b')).toBe('50\\%\\_a\\\\b');
  });
});

describe('ensureDatabase and migrate', () => {
  const database = unusedTestDatabase('db_pkg');
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    await writeFile(path.join(dir, '001.do.coisa.sql'), 'create table coisa (id int primary key);');
    await writeFile(path.join(dir, '002.do.outra.sql'), 'alter table coisa add column nome text;');
  });
  afterAll(async () => {
    await dropDatabase(database.name);
    await rm(dir, { recursive: true, force: true });
  });

  it('When run twice, and by two processes at once, then the database is created once and each migration applied once', async () => {
    await Promise.all([ensureDatabase(database.url), ensureDatabase(database.url)]);
    const applied = await Promise.all([migrate(database.url, dir), migrate(database.url, dir)]);
    expect(applied.sort()).toEqual([0, 2]);
    expect(await migrate(database.url, dir)).toBe(0);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query("insert into coisa (id, nome) values (1, 'x')");
    } finally {
      await client.end();
    }
  });
});
