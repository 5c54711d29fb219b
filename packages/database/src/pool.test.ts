import pg from 'pg';
import { criarPool } from './pool';
import { prismaAdapter } from './prisma';

const URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/**
 * Clients taken with `await pool.connect()` (as Prisma's transactions and the outbox relay take
 * them), each a new connection, on an event loop kept busy, while another session terminates their
 * backends over and over (57P01, as a restart does). The busy loop makes the end of a connection's
 * start-up and its termination arrive in one read: node-postgres then emits 'error' on a client the
 * pool has handed out and the caller has not yet received. Without a listener there, that error is
 * unhandled and ends the process; jest reports it and fails the test.
 */
async function clientesNovosSobTerminacao(pool: pg.Pool, nome: string, rodadas: number) {
  const admin = new pg.Client({ connectionString: URL });
  admin.on('error', () => undefined);
  await admin.connect();
  let parar = false;
  let servidas = 0;
  let falhas = 0;
  const ocupado = setInterval(() => {
    const ate = Date.now() + 8;
    while (Date.now() < ate) {}
  }, 1);
  const usar = async () => {
    while (!parar) {
      let client: pg.PoolClient | undefined;
      try {
        client = await pool.connect();
        const ate = Date.now() + 2;
        while (Date.now() < ate) {}
        await client.query('select 1');
        servidas += 1;
        client.release(true);
      } catch (error) {
        falhas += 1;
        client?.release(error as Error);
      }
    }
  };
  const usos = Array.from({ length: 10 }, usar);
  try {
    for (let i = 0; i < rodadas; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [nome]);
    }
  } finally {
    parar = true;
    clearInterval(ocupado);
    await Promise.all(usos);
    await admin.end();
  }
  return { servidas, falhas };
}

test('When the backends of connections being handed out are terminated under a busy event loop, then no error goes unhandled, the callers see failures, and the pool serves again', async () => {
  const nome = `pool-test-${process.pid}-${Date.now()}`;
  const pool = criarPool({ connectionString: URL, max: 10, application_name: nome });
  try {
    const { servidas, falhas } = await clientesNovosSobTerminacao(pool, nome, 40);
    expect(servidas).toBeGreaterThan(0);
    expect(falhas).toBeGreaterThan(0);
    expect((await pool.query('select 1 as um')).rows).toEqual([{ um: 1 }]);
  } finally {
    await pool.end();
  }
}, 60_000);

test("When Prisma's adapter, on a pool of criarPool, is disposed (what $disconnect does), then every connection it opened is closed", async () => {
  const nome = `prisma-dispose-${process.pid}-${Date.now()}`;
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  const abertas = async () =>
    Number(
      (await admin.query('select count(*) from pg_stat_activity where application_name = $1', [nome])).rows[0].count,
    );
  try {
    const adapter = await prismaAdapter(`${URL}?application_name=${nome}`, 4).connect();
    const consulta = { sql: 'select 1 as um from pg_sleep(0.05)', args: [], argTypes: [] };
    await Promise.all(Array.from({ length: 4 }, () => adapter.queryRaw(consulta)));
    const tx = await adapter.startTransaction();
    await tx.queryRaw({ sql: 'select 1', args: [], argTypes: [] });
    await tx.commit();
    expect(await abertas()).toBe(4);
    await adapter.dispose();
    await waitForZero(abertas);
    expect(await abertas()).toBe(0);
  } finally {
    await admin.end();
  }
}, 30_000);

/** pg_stat_activity shows a closed connection's backend until it has exited: a moment. */
async function waitForZero(contar: () => Promise<number>, vezes = 50) {
  for (let i = 0; i < vezes && (await contar()) > 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
}

test("When a statement in a Prisma transaction outlives the pool's query_timeout, then its connection is ended: the transaction's write is never committed, and the next statement runs on a new connection, committed on its own", async () => {
  const nome = `prisma-tempo-${process.pid}-${Date.now()}`;
  const tabela = `pool_tempo_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  const sql = (texto: string) => ({ sql: texto, args: [], argTypes: [] });
  await admin.query(`create table ${tabela} (v text)`);
  // One connection, as a pool whose others are all taken: without the fix, the next statement waits
  // behind the abandoned one on the same connection, and then runs inside its transaction.
  const adapter = await prismaAdapter(`${URL}?application_name=${nome}`, 1, 300).connect();
  try {
    const tx = await adapter.startTransaction();
    await tx.executeRaw(sql(`insert into ${tabela} values ('abandonada')`));
    await expect(tx.queryRaw(sql('select pg_sleep(1.5)'))).rejects.toBeDefined();
    await tx.rollback().catch(() => undefined);

    await adapter.executeRaw(sql(`insert into ${tabela} values ('seguinte')`));
    // The abandoned backend ends once its pg_sleep is over and it finds its client gone.
    await waitForZero(
      async () =>
        Number(
          (
            await admin.query(
              "select count(*) from pg_stat_activity where application_name = $1 and query like '%pg_sleep%'",
              [nome],
            )
          ).rows[0].count,
        ),
      40,
    );
    expect((await admin.query(`select v from ${tabela} order by v`)).rows).toEqual([{ v: 'seguinte' }]);
  } finally {
    await adapter.dispose();
    await admin.query(`drop table ${tabela}`);
    await admin.end();
  }
}, 30_000);

test('When a write is refused because the server is read-only (25006, a standby reached during a failover), then that connection is ended and the next statement runs on a new one, for a client held as a transaction holds it and for a Prisma transaction', async () => {
  // A session that refuses writes as a standby does: every transaction read-only.
  const somenteLeitura = `${URL}?options=${encodeURIComponent('-c default_transaction_read_only=on')}`;
  const pool = criarPool({ connectionString: somenteLeitura, max: 1 });
  const adapter = await prismaAdapter(somenteLeitura, 1).connect();
  const sql = (texto: string) => ({ sql: texto, args: [], argTypes: [] });
  const pid = async () => (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const pidPrisma = async () => (await adapter.queryRaw(sql('select pg_backend_pid() as pid'))).rows[0]![0];
  try {
    const antes = await pid();
    expect(await pid()).toBe(antes); // the pool reuses its one connection
    // Taken and given back as a holder does (pg-pool's own query() drops a client that failed; a holder does not).
    const client = await pool.connect();
    await expect(client.query('create table nunca_criada (n int)')).rejects.toMatchObject({ code: '25006' });
    client.release();
    expect(await pid()).not.toBe(antes);

    const antesPrisma = await pidPrisma();
    const tx = await adapter.startTransaction();
    await expect(tx.executeRaw(sql('create table nunca_criada (n int)'))).rejects.toBeDefined();
    await tx.rollback().catch(() => undefined);
    expect(await pidPrisma()).not.toBe(antesPrisma);
  } finally {
    await adapter.dispose();
    await pool.end();
  }
}, 30_000);
