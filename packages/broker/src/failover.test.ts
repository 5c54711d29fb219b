import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { createLogger } from '@hub/log';
import { Broker, brokerUrls } from './broker';
import { retryQueueName } from './ladder';

// infra/test/setup-env.js points RABBITMQ_URL at the tests' virtual host; the "nodes" below are relays to it.
const RABBITMQ_URL = process.env.RABBITMQ_URL;
if (!RABBITMQ_URL) throw new Error('RABBITMQ_URL is not set (jest.config.js sets it up for the tests)');
const rabbit = new URL(RABBITMQ_URL);
const rabbitPort = Number(rabbit.port || 5672);
const at = (port: number) => {
  const url = new URL(RABBITMQ_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
};
const logger = createLogger('broker-failover-test');
const name = (what: string) => `test.failover.${what}.${process.pid}.${Date.now()}`;

/**
 * A stand-in for one node of a cluster: a TCP relay to the tests' broker that counts the
 * connections it took, and can drop them (the node stopping) or go silent (a node that takes the
 * TCP connection and never answers).
 */
async function node(options: { silent?: boolean } = {}) {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((client) => {
    connections += 1;
    client.on('error', () => undefined);
    sockets.add(client);
    if (options.silent) return;
    const upstream = net.connect(rabbitPort, rabbit.hostname);
    upstream.on('error', () => undefined);
    sockets.add(upstream);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: at(port),
    connections: () => connections,
    /** Drops every connection it carries; keeps listening. */
    drop: () => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    /** Drops every connection and refuses new ones. */
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
type Node = Awaited<ReturnType<typeof node>>;

async function until(check: () => boolean, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const nodes: Node[] = [];
const brokers: Broker[] = [];
afterEach(async () => {
  await Promise.all(brokers.splice(0).map((b) => b.close()));
  await Promise.all(nodes.splice(0).map((n) => n.stop()));
});
const cluster = async (...options: { silent?: boolean }[]) => {
  const started = await Promise.all(options.map((o) => node(o)));
  nodes.push(...started);
  return started;
};
const connect = async (urls: string | string[], extra: { connectTimeoutMs?: number } = {}) => {
  const broker = new Broker(urls, logger, { name: 'failover-test', ...extra });
  brokers.push(broker);
  return broker.start();
};

describe('brokerUrls', () => {
  it('When the setting lists nodes separated by commas, then each is a URL, blanks around them dropped', () => {
    expect(brokerUrls(' amqp://a:1/x ,amqp://b:2/x,')).toEqual(['amqp://a:1/x', 'amqp://b:2/x']);
  });

  it('When the setting is empty, then it is refused', () => {
    expect(() => brokerUrls(' , ')).toThrow(/no RabbitMQ URL/);
  });
});

describe('Broker over several nodes', () => {
  it('When the first node refuses connections, then the broker connects to the next one', async () => {
    const [first, second] = await cluster({}, {});
    const down = first!.url;
    await first!.stop();
    const broker = await connect([down, second!.url]);
    expect(broker.connected).toBe(true);
    expect(second!.connections()).toBe(1);
  });

  it('When a node takes the TCP connection and never answers, then the next one is tried after the connect timeout', async () => {
    const [silent, good] = await cluster({ silent: true }, {});
    const broker = await connect(`${silent!.url},${good!.url}`, { connectTimeoutMs: 20_000 });
    expect(broker.connected).toBe(true);
    expect(silent!.connections()).toBe(1);
    expect(good!.connections()).toBe(1);
  }, 30_000);

  it('When the node it is connected to stops, then it reconnects to another node and its consumer receives again', async () => {
    const [a, b] = await cluster({}, {});
    const broker = await connect([a!.url, b!.url]);
    const queue = name('moves');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { autoDelete: true, durable: false });
    });
    const seen: string[] = [];
    await broker.consume(queue, async (message) => {
      seen.push(message.content.toString());
    });
    await broker.publish('', queue, Buffer.from('antes'));
    await until(() => seen.includes('antes'));

    const reconnected = new Promise((resolve) => broker.once('connected', resolve));
    await a!.stop();
    await reconnected;
    expect(b!.connections()).toBeGreaterThan(0);
    await broker.publish('', queue, Buffer.from('depois'));
    await until(() => seen.includes('depois'));
  });

  it('When a connection is lost while its node still listens, then the next node is tried first', async () => {
    const [a, b] = await cluster({}, {});
    const broker = await connect([a!.url, b!.url]);
    expect([a!.connections(), b!.connections()]).toEqual([1, 0]);
    const reconnected = new Promise((resolve) => broker.once('connected', resolve));
    a!.drop();
    await reconnected;
    expect([a!.connections(), b!.connections()]).toEqual([1, 1]);
  });

  it('When every node is down, then start fails naming RabbitMQ instead of hanging', async () => {
    const [a, b] = await cluster({}, {});
    await a!.stop();
    await b!.stop();
    await expect(connect([a!.url, b!.url], { connectTimeoutMs: 300 })).rejects.toThrow(/cannot reach RabbitMQ/);
  });
});

describe('Retry queues on a cluster', () => {
  it('When a consumer declares its delay steps, then they are quorum queues (replicated: a node down cannot take them away)', async () => {
    const broker = await connect(RABBITMQ_URL);
    const queue = name('steps');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { autoDelete: true, durable: false });
    });
    await broker.consume(queue, async () => undefined, { retry: { maxAttempts: 2, delaysMs: [1_000] } });
    const vhost = decodeURIComponent(rabbit.pathname.slice(1)) || '/';
    const { stdout } = await promisify(execFile)('rabbitmqctl', ['-q', 'list_queues', '-p', vhost, 'name', 'type'], {
      timeout: 30_000,
    });
    const types = new Map(stdout.split('\n').map((line) => line.trim().split(/\s+/) as [string, string]));
    expect(types.get(retryQueueName(1_000))).toBe('quorum');
  });
});
