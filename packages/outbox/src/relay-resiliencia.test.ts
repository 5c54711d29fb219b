import type { Broker } from '@hub/broker';
import { createLogger } from '@hub/log';
import {
  connectTestBroker,
  type PrivatePostgres,
  startPrivatePostgres,
  type TestDatabase,
  uniqueName,
  waitFor,
} from '@hub/testing';
import pg from 'pg';
import { OutboxRelay } from './relay';
import { OUTBOX_MIGRATIONS_DIR, outboxInsert } from './table';

// A relay on a PostgreSQL server of this file's own, which the test kills and restarts while
// batches are claimed and waiting for broker confirms (never the shared server).
const logger = createLogger('outbox-resiliencia-test');
const exchange = uniqueName('test.outbox.res');
const queue = uniqueName('test.outbox.res.q');
let postgres: PrivatePostgres;
let db: TestDatabase;
let broker: Broker;
const received = new Set<string>();

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  db = await postgres.database('outbox', OUTBOX_MIGRATIONS_DIR);
  broker = await connectTestBroker('outbox-resiliencia');
  await broker.withChannel(async (channel) => {
    await channel.assertExchange(exchange, 'topic', { durable: false });
    await channel.assertQueue(queue, { durable: false });
    await channel.bindQueue(queue, exchange, '#');
  });
  await broker.consume(
    queue,
    async (message) => {
      received.add(String(message.properties.messageId));
    },
    { prefetch: 500 },
  );
}, 60_000);

afterAll(async () => {
  await broker?.withChannel(async (channel) => {
    await channel.deleteQueue(queue);
    await channel.deleteExchange(exchange);
  });
  await broker?.close();
  await postgres?.close();
});

/** Runs `work` on a connection of its own (the server may have been restarted since the last one). */
async function sql<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function insert(count: number): Promise<string[]> {
  const prefix = uniqueName('m');
  const messages = Array.from({ length: count }, (_, i) => ({
    exchange,
    routingKey: 'teste.criado',
    messageId: `${prefix}-${i}`,
    body: { n: i },
  }));
  const { text, values } = outboxInsert(messages);
  await sql((client) => client.query(text, values));
  return messages.map((m) => m.messageId);
}

/** A relay batch is claimed and waiting for its broker confirms: its connection sits idle in a transaction. */
const batchUnderWay = () =>
  sql(async (client) => {
    const { rows } = await client.query(
      `select 1 from pg_stat_activity where datname = current_database() and state = 'idle in transaction'`,
    );
    return rows.length > 0;
  });

test('When PostgreSQL is killed or restarted while a batch waits for its confirms, then the relay survives, and every row is published and marked once it is back', async () => {
  const relay = await new OutboxRelay({
    databaseUrl: db.url,
    broker,
    logger,
    pollIntervalMs: 200,
    batchSize: 500,
    maxBackoffMs: 1_000,
  }).start();
  try {
    const ids: string[] = [];
    for (const modo of ['kill', 'fast', 'immediate'] as const) {
      ids.push(...(await insert(5_000)));
      await waitFor(batchUnderWay, { timeoutMs: 20_000, intervalMs: 5, what: 'a batch under way' });
      await postgres.restart(modo);
    }
    await waitFor(
      async () => (await sql((c) => c.query('select 1 from outbox where publicado_em is null limit 1'))).rowCount === 0,
      { timeoutMs: 120_000, intervalMs: 200, what: 'every row marked published' },
    );
    // No acknowledged insert was lost with the server, and every row marked published reached the broker.
    const linhas = await sql((c) => c.query<{ n: number }>('select count(*)::int as n from outbox'));
    expect(linhas.rows[0]!.n).toBe(ids.length);
    await waitFor(() => ids.every((id) => received.has(id)), { timeoutMs: 60_000, what: 'every row received' });
  } finally {
    await relay.stop();
  }
}, 240_000);
