import { createLogger } from '@hub/log';
import type { Channel } from 'amqplib';
import { Broker } from './broker';
import { RETRY_EXCHANGE, retryQueueName } from './ladder';
import { migrateOldLadders, OLD_CONSUMER_LADDERS } from './ladder-migration';

const RABBITMQ_URL = process.env.RABBITMQ_URL;
if (!RABBITMQ_URL) throw new Error('RABBITMQ_URL is not set (jest.config.js sets it up for the tests)');
const logger = createLogger('ladder-migration-test');
const [v3] = OLD_CONSUMER_LADDERS;
// A step no other test names, so the old queue is this file's alone.
const STEP_MS = 1_700;
const oldQueue = v3!.queueName(STEP_MS);

let brokers: Broker[] = [];
const connect = async () => {
  const broker = await new Broker(RABBITMQ_URL, logger, { name: 'ladder-migration-test' }).start();
  brokers.push(broker);
  return broker;
};
afterEach(async () => {
  await Promise.all(brokers.map((b) => b.close()));
  brokers = [];
});

/** The ladder `hub.novas-tentativas.v3` as the broker before the one ladder declared it, and a retry waiting in it. */
async function oldRetryWaiting(channel: Channel, queue: string, body: string): Promise<void> {
  await channel.assertExchange(v3!.exchange, 'headers', { durable: true });
  await channel.assertQueue(oldQueue, {
    durable: true,
    arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': STEP_MS, 'x-dead-letter-exchange': '' },
  });
  await channel.bindQueue(oldQueue, v3!.exchange, '', { 'x-match': 'all', 'hub-atraso-ms': String(STEP_MS) });
  channel.publish(v3!.exchange, queue, Buffer.from(body), {
    persistent: true,
    messageId: 'm-1',
    expiration: String(STEP_MS),
    headers: { 'hub-atraso-ms': String(STEP_MS), 'hub-tentativa': 2 },
  });
}

async function until(check: () => Promise<boolean>) {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const notFound = (check: Promise<unknown>) => expect(check).rejects.toMatchObject({ code: 404 });

describe('Migration of the old retry ladders', () => {
  it('When retries wait in an old ladder and two processes start at once, then the one whose queue exists is moved to the one ladder and comes back to it once, the other dropped, and the old queue and exchange are gone', async () => {
    const [a, b] = [await connect(), await connect()];
    const queue = `test.ladder-migration.${process.pid}.${Date.now()}`;
    await a.withChannel((ch) => ch.assertQueue(queue, { durable: true }));
    const body = `{"marca":"${queue}"}`;
    await a.withChannel((ch) => oldRetryWaiting(ch, queue, body));
    // And one whose queue was deleted while it waited: dropped, as the old ladder would have.
    await a.withChannel(async (ch) => oldRetryWaiting(ch, `${queue}.apagada`, body));
    await until(async () => (await a.withChannel((ch) => ch.checkQueue(oldQueue))).messageCount === 2);

    const ladders = OLD_CONSUMER_LADDERS.map((ladder) => ({ ladder, stepsMs: [STEP_MS] }));
    const moved = await Promise.all([migrateOldLadders(a, ladders, logger), migrateOldLadders(b, ladders, logger)]);
    expect(moved[0]! + moved[1]!).toBe(1);
    await notFound(a.withChannel((ch) => ch.checkQueue(oldQueue)));
    await notFound(a.withChannel((ch) => ch.checkExchange(v3!.exchange)));

    // Back from the new ladder's step, its headers and id kept.
    const back = await a.withChannel(async (ch) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const got = await ch.get(queue, { noAck: true });
        if (got) return got;
        if (Date.now() > deadline) throw new Error('the retry never came back');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    expect(back.content.toString()).toBe(body);
    expect(back.properties.messageId).toBe('m-1');
    expect(back.properties.headers?.['hub-tentativa']).toBe(2);
    expect(back.properties.headers?.['x-death']).toEqual([
      expect.objectContaining({ queue: retryQueueName(STEP_MS), exchange: RETRY_EXCHANGE, reason: 'expired' }),
    ]);
    await a.withChannel((ch) => ch.checkQueue(queue)).then((q) => expect(q.messageCount).toBe(0));
    await a.withChannel((ch) => ch.deleteQueue(queue));
  });

  it('When no old ladder exists, then the migration moves nothing and succeeds, again and again', async () => {
    const a = await connect();
    const ladders = OLD_CONSUMER_LADDERS.map((ladder) => ({ ladder, stepsMs: [STEP_MS, 1_900] }));
    expect(await migrateOldLadders(a, ladders, logger)).toBe(0);
    expect(await migrateOldLadders(a, ladders, logger)).toBe(0);
    expect(a.connected).toBe(true);
  });
});
