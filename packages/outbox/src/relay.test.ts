import { Broker } from '@hub/broker';
import { createLogger } from '@hub/log';
import { connectTestBroker, createTestDatabase, type TestDatabase, uniqueName, waitFor } from '@hub/testing';
import pg from 'pg';
import { OutboxRelay, type OutboxRelayOptions } from './relay';
import { OUTBOX_MIGRATIONS_DIR, outboxInsert } from './table';

const logger = createLogger('outbox-test');
let db: TestDatabase;
let pool: pg.Pool;
let broker: Broker;
let otherBroker: Broker;
const exchange = uniqueName('test.outbox');
const queue = uniqueName('test.outbox.q');
const received: { messageId: string; body: unknown; routingKey: string; headers: unknown }[] = [];
const relays: OutboxRelay[] = [];

function relay(options: Partial<OutboxRelayOptions> = {}): OutboxRelay {
  const r = new OutboxRelay({ databaseUrl: db.url, broker, logger, pollIntervalMs: 60_000, ...options });
  relays.push(r);
  return r;
}

async function insert(count: number, prefix = uniqueName('m')): Promise<string[]> {
  const messages = Array.from({ length: count }, (_, i) => ({
    exchange,
    routingKey: 'teste.criado',
    messageId: `${prefix}-${i}`,
    body: { n: i, texto: 'olá' },
    headers: { 'x-origem': 'teste' },
  }));
  const { text, values } = outboxInsert(messages);
  await pool.query(text, values);
  return messages.map((m) => m.messageId);
}

const receivedIds = (ids: string[]) => {
  const wanted = new Set(ids);
  return received.filter((m) => wanted.has(m.messageId));
};

async function pendingCount(): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from outbox where publicado_em is null');
  return rows[0]!.n;
}

beforeAll(async () => {
  db = await createTestDatabase('outbox', OUTBOX_MIGRATIONS_DIR);
  pool = new pg.Pool({ connectionString: db.url, max: 3 });
  broker = await connectTestBroker('outbox-a');
  otherBroker = await connectTestBroker('outbox-b');
  await broker.withChannel(async (channel) => {
    await channel.assertExchange(exchange, 'topic', { durable: false });
    await channel.assertQueue(queue, { durable: false });
    await channel.bindQueue(queue, exchange, '#');
  });
  await broker.consume(
    queue,
    async (message) => {
      received.push({
        messageId: String(message.properties.messageId),
        body: JSON.parse(message.content.toString('utf8')),
        routingKey: message.fields.routingKey,
        headers: message.properties.headers,
      });
    },
    { prefetch: 500 },
  );
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  await broker.withChannel(async (channel) => {
    await channel.deleteQueue(queue);
    await channel.deleteExchange(exchange);
  });
  await broker.close();
  await otherBroker.close();
  await pool.end();
  await db.drop();
});

test('When rows are inserted while two relays run, then the NOTIFY wakes them and each row is published exactly once with its id, key, body and headers', async () => {
  await relay().start();
  await relay({ broker: otherBroker }).start();
  // The poll is a minute away: only the notification can explain a prompt publication.
  const ids = await insert(1_200);
  await waitFor(() => receivedIds(ids).length >= ids.length, { what: 'every row published' });
  await waitFor(async () => (await pendingCount()) === 0, { what: 'rows marked published' });
  const mine = receivedIds(ids);
  expect(new Set(mine.map((m) => m.messageId)).size).toBe(ids.length);
  expect(mine.length).toBe(ids.length);
  const first = mine.find((m) => m.messageId === ids[0]);
  expect(first).toMatchObject({
    routingKey: 'teste.criado',
    body: { n: 0, texto: 'olá' },
    headers: { 'x-origem': 'teste' },
  });
});

test('When two relays claim the same backlog at once, then no row is published twice in that pass', async () => {
  const ids = await insert(3_000);
  const [a, b] = await Promise.all([
    relay({ batchSize: 200 }).publishPending(),
    relay({ batchSize: 200, broker: otherBroker }).publishPending(),
  ]);
  expect(a + b).toBe(ids.length);
  // Both took part: the backlog was really shared, not drained by one of them alone.
  expect(a).toBeGreaterThan(0);
  expect(b).toBeGreaterThan(0);
  await waitFor(() => receivedIds(ids).length >= ids.length, { what: 'every row delivered' });
  const count = await broker.withChannel((channel) => channel.checkQueue(queue));
  expect(count.messageCount).toBe(0);
  const mine = receivedIds(ids);
  expect(mine.length).toBe(ids.length);
  expect(new Set(mine.map((m) => m.messageId)).size).toBe(ids.length);
  expect(await pendingCount()).toBe(0);
});

test('When a row is inserted while the broker is unreachable, then it stays pending and is published once a relay reaches the broker', async () => {
  const unreachable = new Broker('amqp://guest:guest@127.0.0.1:1', logger, { name: 'unreachable', maxBackoffMs: 100 });
  const down = relay({ broker: unreachable, publishTimeoutMs: 300 });
  const [id] = await insert(1);
  await expect(down.publishPending()).rejects.toThrow(/not confirmed/);
  const { rows } = await pool.query('select publicado_em, tentativas, ultimo_erro from outbox where message_id = $1', [
    id,
  ]);
  expect(rows[0]).toMatchObject({ publicado_em: null, tentativas: 1 });
  expect(rows[0].ultimo_erro).toMatch(/confirm/);
  await down.stop();
  await unreachable.close();

  await relay().start();
  await waitFor(() => receivedIds([id!]).length === 1, { what: 'the row published after the broker came back' });
  await waitFor(async () => (await pendingCount()) === 0, { what: 'the row marked published' });
});

test('When a relay is stopped mid-backlog, then what it published is marked, and a new relay publishes the rest exactly once', async () => {
  const ids = await insert(2_000);
  const first = await relay({ batchSize: 100, concurrency: 2, pollIntervalMs: 10 }).start();
  await waitFor(() => first.stats.publicadas > 0, { what: 'a first batch' });
  await first.stop();
  const { rows } = await pool.query<{ n: number }>(
    'select count(*)::int as n from outbox where publicado_em is not null and message_id = any($1)',
    [ids],
  );
  expect(rows[0]!.n).toBe(first.stats.publicadas);
  await waitFor(() => receivedIds(ids).length >= first.stats.publicadas, { what: 'the drained batches delivered' });

  await relay({ batchSize: 500 }).start();
  await waitFor(() => receivedIds(ids).length >= ids.length, { what: 'the rest published' });
  await waitFor(async () => (await pendingCount()) === 0, { what: 'all marked' });
  const mine = receivedIds(ids);
  expect(new Set(mine.map((m) => m.messageId)).size).toBe(ids.length);
  expect(mine.length).toBe(ids.length);
});

test('When published rows are older than the retention, then the purge deletes them and never a pending row', async () => {
  const r = relay();
  const ids = await insert(10);
  await r.publishPending();
  await pool.query(`update outbox set publicado_em = now() - interval '8 days' where message_id = any($1)`, [
    ids.slice(0, 4),
  ]);
  const pending = await insert(1);
  await pool.query(`update outbox set criado_em = now() - interval '30 days' where message_id = $1`, [pending[0]]);

  expect(await r.purgePublished(7 * 24 * 3_600_000)).toBe(4);
  const { rows } = await pool.query<{ message_id: string }>(
    'select message_id from outbox where message_id = any($1)',
    [[...ids, ...pending]],
  );
  expect(rows.map((row) => row.message_id).sort()).toEqual([...ids.slice(4), ...pending].sort());
});

test('When a row has failed before, then fresh rows are claimed ahead of it, so one bad row cannot hold up the rest', async () => {
  await relay().publishPending(); // nothing left over from earlier tests
  const [old] = await insert(1);
  await pool.query(`update outbox set tentativas = 3, criado_em = now() - interval '1 hour' where message_id = $1`, [
    old,
  ]);
  const [fresh] = await insert(1);
  const r = relay({ batchSize: 1 });
  await r.publishPending(1);
  const { rows } = await pool.query<{ message_id: string; publicado: boolean }>(
    'select message_id, publicado_em is not null as publicado from outbox where message_id = any($1)',
    [[old, fresh]],
  );
  expect(Object.fromEntries(rows.map((row) => [row.message_id, row.publicado]))).toEqual({
    [old!]: false,
    [fresh!]: true,
  });
  await r.publishPending();
  await waitFor(() => receivedIds([old!, fresh!]).length === 2, { what: 'both published in the end' });
});
