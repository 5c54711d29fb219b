import type { Broker } from '@hub/broker';
import { createLogger } from '@hub/log';
import { connectTestBroker, createTestDatabase, type TestDatabase, uniqueName, waitFor } from '@hub/testing';
import { SpanKind } from '@hub/tracing';
import { rastrearEmMemoria } from '@hub/tracing/em-memoria';
import pg from 'pg';
import { OutboxRelay } from './relay';
import { OUTBOX_MIGRATIONS_DIR, outboxInsert } from './table';

/**
 * The relay's publish in a trace (docs/decisions/tracing.md): with tracing on,
 * each row becomes a PRODUCER span, the child of the context its headers carry (the publication's),
 * and the message carries that span's context instead; a row without one starts a trace.
 */
const spans = rastrearEmMemoria();
const logger = createLogger('outbox-rastro-test');
let db: TestDatabase;
let pool: pg.Pool;
let broker: Broker;
let relay: OutboxRelay;
const exchange = uniqueName('test.outbox.rastro');
const queue = uniqueName('test.outbox.rastro.q');
const recebidas = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  db = await createTestDatabase('outbox_rastro', OUTBOX_MIGRATIONS_DIR);
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  broker = await connectTestBroker('outbox-rastro');
  await broker.withChannel(async (channel) => {
    await channel.assertExchange(exchange, 'topic', { durable: false });
    await channel.assertQueue(queue, { durable: false });
    await channel.bindQueue(queue, exchange, '#');
  });
  await broker.consume(queue, async (message) => {
    recebidas.set(String(message.properties.messageId), message.properties.headers ?? {});
  });
  relay = await new OutboxRelay({ databaseUrl: db.url, broker, logger, pollIntervalMs: 60_000 }).start();
});

afterAll(async () => {
  await relay?.stop();
  await broker?.withChannel(async (channel) => {
    await channel.deleteQueue(queue);
    await channel.deleteExchange(exchange);
  });
  await broker?.close();
  await pool?.end();
  await db?.drop();
});

test("When the relay publishes rows, then each is a PRODUCER span under its row's context, whose context the message carries", async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const pai = '00f067aa0ba902b7';
  const comContexto = uniqueName('com');
  const semContexto = uniqueName('sem');
  const { text, values } = outboxInsert([
    {
      exchange,
      routingKey: 'teste.rastro',
      messageId: comContexto,
      body: { n: 1 },
      headers: { traceparent: `00-${traceId}-${pai}-01`, 'x-origem': 'teste' },
    },
    { exchange, routingKey: 'teste.rastro', messageId: semContexto, body: { n: 2 } },
  ]);
  await pool.query(text, values);
  await waitFor(() => recebidas.has(comContexto) && recebidas.has(semContexto), { what: 'both rows published' });

  const publish = (id: string) =>
    waitFor(
      () =>
        spans
          .getFinishedSpans()
          .find((s) => s.attributes['messaging.message.id'] === id && s.name === `publish ${exchange}`),
      { what: `the span of ${id}` },
    );
  const com = await publish(comContexto);
  expect(com.kind).toBe(SpanKind.PRODUCER);
  expect(com.spanContext().traceId).toBe(traceId);
  expect(com.parentSpanContext?.spanId).toBe(pai);
  expect(com.attributes['hub.outbox']).toBe(true);
  expect(recebidas.get(comContexto)).toMatchObject({
    'x-origem': 'teste',
    traceparent: `00-${traceId}-${com.spanContext().spanId}-01`,
  });

  const sem = await publish(semContexto);
  expect(sem.parentSpanContext).toBeUndefined();
  expect(sem.spanContext().traceId).not.toBe(traceId);
  expect(recebidas.get(semContexto)?.traceparent).toBe(
    `00-${sem.spanContext().traceId}-${sem.spanContext().spanId}-01`,
  );
});
