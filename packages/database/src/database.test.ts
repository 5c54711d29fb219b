import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { uuidv7 } from './ids';
import { ensureDatabase, migrate } from './migrate';
import { dadosRecusados, likeLiteral } from './prisma';
import { SqlPool } from './sql';
import { dropDatabase, unusedTestDatabase } from './test-database.test-support';

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

describe('SqlPool', () => {
  const database = unusedTestDatabase('db_sql');
  let sql: SqlPool;
  beforeAll(async () => {
    await ensureDatabase(database.url);
    sql = new SqlPool(database.url, 2);
    await sql.consultar('criar', 'create table item (id int primary key, nome text not null)', []);
  });
  afterAll(async () => {
    await sql.fechar();
    await dropDatabase(database.name);
  });

  it('When a named statement runs many times on the pool, then it is prepared once per connection and answers each call', async () => {
    const inserir = 'insert into item (id, nome) select * from unnest($1::int[], $2::text[]) returning id';
    const lotes = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map((i) => sql.consultar<{ id: number }>('item_inserir', inserir, [[i], [`n${i}`]])),
    );
    expect(
      lotes
        .flat()
        .map((l) => l.id)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const preparados = await sql.consultar<{ n: number }>(
      'contar_preparados',
      "select count(*)::int as n from pg_prepared_statements where name = 'item_inserir'",
      [],
    );
    expect(preparados[0]!.n).toBe(1); // on the connection that answered this query
  });

  it('When the database refuses the data (a NUL in text, a broken key), then dadosRecusados says so, as it does for Prisma', async () => {
    const erro = (nome: string, texto: string, valores: unknown[]) =>
      sql.consultar(nome, texto, valores).then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(dadosRecusados(await erro('nul', 'insert into item (id, nome) values ($1, $2)', [100, 'a\u0000b']))).toBe(
      true,
    );
    expect(dadosRecusados(await erro('dup', 'insert into item (id, nome) values ($1, $2)', [0, 'de novo']))).toBe(true);
    expect(dadosRecusados(new Error('connect ECONNREFUSED 127.0.0.1:5432'))).toBe(false);
  });
});
