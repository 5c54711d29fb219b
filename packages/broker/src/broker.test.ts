import { createLogger } from '@hub/log';
import { Broker } from './broker';

const URL = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const logger = createLogger('broker-test');
const name = (what: string) => `test.broker.${what}.${process.pid}.${Date.now()}`;

let broker: Broker;
beforeEach(async () => {
  broker = await new Broker(URL, logger, { name: 'broker-test' }).start();
});
afterEach(async () => {
  await broker.close();
});

async function until(check: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('Broker', () => {
  it('When a message is published with confirms, then a consumer receives it and acks it after its handler', async () => {
    const queue = name('roundtrip');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { autoDelete: true, durable: false });
    });
    const seen: string[] = [];
    await broker.consume(queue, async (message) => {
      seen.push(message.content.toString());
    });
    await broker.publish('', queue, Buffer.from('um'));
    await until(() => seen.length === 1);
    expect(seen).toEqual(['um']);
    const depth = await broker.withChannel((ch) => ch.checkQueue(queue));
    expect(depth.messageCount).toBe(0);
  });

  it('When the handler fails, then the message comes back and is handled again', async () => {
    const queue = name('retry');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { autoDelete: true, durable: false });
    });
    let attempts = 0;
    await broker.consume(queue, async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('passing failure');
    });
    await broker.publish('', queue, Buffer.from('x'));
    await until(() => attempts === 2);
  });

  it('When the connection is lost, then it reconnects, re-declares the topology and consumes again', async () => {
    const queue = name('heal');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { exclusive: true, durable: false });
    });
    const seen: string[] = [];
    await broker.consume(queue, async (message) => {
      seen.push(message.content.toString());
    });
    const reconnected = new Promise((resolve) => broker.once('connected', resolve));
    // biome-ignore lint/suspicious/noExplicitAny: reaching the live connection to cut it, as a network failure would
    await (broker as any).connection.close();
    await reconnected;
    await broker.publish('', queue, Buffer.from('depois'));
    await until(() => seen.includes('depois'));
  });

  it('When publishing to an exchange that does not exist, then publish rejects and the broker heals', async () => {
    await expect(broker.publish(name('nada'), 'x', Buffer.from('x'))).rejects.toThrow();
    const queue = name('after');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { exclusive: true, durable: false });
    });
    await broker.publish('', queue, Buffer.from('ok'));
  });

  it('When RabbitMQ cannot be reached, then start fails with a clear message instead of hanging', async () => {
    const nowhere = new Broker('amqp://guest:guest@127.0.0.1:1', logger, { name: 'nowhere', connectTimeoutMs: 300 });
    await expect(nowhere.start()).rejects.toThrow(/cannot reach RabbitMQ/);
  });
});
