import pg from 'pg';
import { type PrivatePatroni, startPrivatePatroni } from './patroni';
import { waitFor } from './wait';

/**
 * A fault scenario, run by `pnpm test:faults` (its name ends in resiliencia.test.ts): the Patroni
 * cluster of the fault tests: it starts with a primary and a synchronous standby,
 * HAProxy's read-write port writes on the primary, and when the primary's Patroni and PostgreSQL are
 * killed -9 for good the standby is promoted and a write on the same port lands on it, with every
 * row committed before the kill.
 */
let cluster: PrivatePatroni;

beforeAll(async () => {
  cluster = await startPrivatePatroni();
}, 180_000);
afterAll(() => cluster?.close(), 60_000);

const naPorta = async (url: string, sql: string, valores: unknown[] = []) => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query(sql, valores)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
};

test('When the primary is killed -9 and never started again, then the synchronous standby is promoted and a write on the read-write port lands on it with every acknowledged row', async () => {
  const antigo = await cluster.primario();
  const sincrono = await cluster.standbySincrono();
  expect(sincrono).not.toBe(antigo);
  await naPorta(cluster.url, 'create table guardado (n int primary key, porta int)');
  for (let n = 0; n < 100; n += 1)
    await naPorta(cluster.url, 'insert into guardado values ($1, inet_server_port())', [n]);
  expect(await naPorta(cluster.readUrl, 'select pg_is_in_recovery() as r')).toEqual([{ r: true }]);

  await cluster.kill(antigo);
  expect(cluster.running(antigo)).toBe(false);

  const novo = await cluster.primario(antigo);
  expect(novo).toBe(sincrono);
  const escrito = await waitFor(
    () =>
      naPorta(cluster.url, 'insert into guardado values (100, inet_server_port()) returning porta').catch(() => false),
    { timeoutMs: 60_000, intervalMs: 200, what: 'a write on the read-write port after the failover' },
  );
  expect(escrito).toEqual([{ porta: cluster.portas[novo] }]);
  const linhas = await naPorta(
    cluster.url,
    'select count(*)::int as n, count(distinct porta)::int as portas from guardado',
  );
  expect(linhas).toEqual([{ n: 101, portas: 2 }]);
  // The third member follows the new primary; it becomes the synchronous standby.
  expect(await cluster.standbySincrono(novo)).not.toBe(antigo);
}, 180_000);
