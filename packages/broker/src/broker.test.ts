import net from 'node:net';
import { createLogger } from '@hub/log';
import { Broker, RequeueMessage, UnroutableError } from './broker';

// infra/test/setup-env.js points RABBITMQ_URL at the tests' virtual host; every address below derives from it.
const RABBITMQ_URL = process.env.RABBITMQ_URL;
if (!RABBITMQ_URL) throw new Error('RABBITMQ_URL is not set (jest.config.js sets it up for the tests)');
const rabbit = new URL(RABBITMQ_URL);
const rabbitHost = rabbit.hostname;
const rabbitPort = Number(rabbit.port || (rabbit.protocol === 'amqps:' ? 5671 : 5672));
/** The tests' broker URL (credentials and virtual host kept) at another address. */
const at = (host: string, port: number) => {
  const url = new URL(RABBITMQ_URL);
  url.hostname = host;
  url.port = String(port);
  return url.toString();
};
const logger = createLogger('broker-test');
const name = (what: string) => `test.broker.${what}.${process.pid}.${Date.now()}`;

let broker: Broker;
beforeEach(async () => {
  broker = await new Broker(RABBITMQ_URL, logger, { name: 'broker-test' }).start();
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

  it('When many messages are published at once, small and over 2 KiB, then they arrive whole and in order', async () => {
    const agrupado = await new Broker(RABBITMQ_URL, logger, { name: 'broker-test-agrupado' }).start();
    try {
      const queue = name('grouped');
      await agrupado.declare(async (ch) => {
        await ch.assertQueue(queue, { autoDelete: true, durable: false });
      });
      const seen: string[] = [];
      await agrupado.consume(queue, async (message) => {
        seen.push(message.content.toString());
      });
      // 300 messages, a third over amqplib's 2 KiB single-chunk threshold: more than one turn's
      // worth of the socket's buffer, so the multiplexer also waits for 'drain' while corked.
      const sent = Array.from({ length: 300 }, (_, i) => `${i}:${'x'.repeat(i % 3 === 0 ? 3000 : 100)}`);
      await Promise.all(sent.map((text) => agrupado.publish('', queue, Buffer.from(text))));
      await until(() => seen.length === sent.length);
      expect(seen).toEqual(sent);
    } finally {
      await agrupado.close();
    }
  });

  it('When acks are batched, then every message is acked once and an ack with multiple never covers one still being handled', async () => {
    const queue = name('batch-acks');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { durable: false });
    });
    const seen: string[] = [];
    let releaseFirst!: () => void;
    const first = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const consumption = await broker.consume(
      queue,
      async (message) => {
        const body = message.content.toString();
        seen.push(body);
        // The oldest message is held while the 39 after it are acked, then given back.
        if (body === '0' && seen.filter((s) => s === '0').length === 1) {
          await first;
          throw new RequeueMessage('given back');
        }
      },
      { prefetch: 50, batchAcks: true },
    );
    for (let i = 0; i < 40; i++) await broker.publish('', queue, Buffer.from(String(i)));
    await until(() => seen.length === 40);
    releaseFirst();
    // Had an ack with multiple covered it, its nack would close the channel and it would not come back.
    await until(() => seen.filter((s) => s === '0').length === 2);
    await broker.publish('', queue, Buffer.from('after'));
    await until(() => seen.includes('after'));
    const counts = new Map<string, number>();
    for (const s of seen) counts.set(s, (counts.get(s) ?? 0) + 1);
    expect([...counts].filter(([s, n]) => n !== (s === '0' ? 2 : 1))).toEqual([]);
    // Stopped: its channel closes once every ack is written; an unacked message would be back in the queue.
    await consumption.cancel();
    const depth = await broker.withChannel((ch) => ch.checkQueue(queue));
    await broker.withChannel((ch) => ch.deleteQueue(queue));
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

  it('When a consumer is cancelled, then its handler under way ends and is acked, it takes no more messages, and a reconnection does not start it again', async () => {
    const queue = name('cancelar');
    // Not exclusive: it outlives the connection cut below, with what waits in it.
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { durable: false });
    });
    const seen: string[] = [];
    let soltar: () => void = () => undefined;
    const preso = new Promise<void>((resolve) => {
      soltar = resolve;
    });
    const consumo = await broker.consume(
      queue,
      async (message) => {
        seen.push(message.content.toString());
        if (seen.length === 1) await preso;
      },
      { prefetch: 1 },
    );
    await broker.publish('', queue, Buffer.from('um'));
    await until(() => seen.length === 1);
    const cancelado = consumo.cancel();
    let terminou = false;
    void cancelado.then(() => {
      terminou = true;
    });
    await broker.publish('', queue, Buffer.from('dois'));
    await new Promise((r) => setTimeout(r, 100));
    // The cancel waits for the handler under way.
    expect(terminou).toBe(false);
    soltar();
    await cancelado;
    const reconnected = new Promise((resolve) => broker.once('connected', resolve));
    // biome-ignore lint/suspicious/noExplicitAny: reaching the live connection to cut it, as a network failure would
    await (broker as any).connection.close();
    await reconnected;
    await broker.publish('', queue, Buffer.from('tres'));
    expect(seen).toEqual(['um']);
    // 'um' was acked; 'dois' and 'tres' wait for another consumer.
    expect((await broker.withChannel((ch) => ch.checkQueue(queue))).messageCount).toBe(2);
    await broker.withChannel((ch) => ch.deleteQueue(queue));
  });

  it('When a handler of a consumer with a retryQueue fails, then its retry comes back to that queue, not to the one it was taken from', async () => {
    const queue = name('origem');
    const retorno = name('retorno');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { exclusive: true, durable: false });
      await ch.assertQueue(retorno, { exclusive: true, durable: false });
    });
    const vistos: string[] = [];
    await broker.consume(
      queue,
      async () => {
        throw new Error('passing failure');
      },
      { retryQueue: retorno, retry: { delaysMs: [20], maxAttempts: 3 } },
    );
    await broker.consume(retorno, async (message) => {
      vistos.push(`${message.content.toString()}:${message.properties.headers?.['hub-tentativa']}`);
    });
    await broker.publish('', queue, Buffer.from('x'));
    await until(() => vistos.length === 1);
    expect(vistos).toEqual(['x:2']);
  });

  it('When publishing to an exchange that does not exist, then publish rejects and the broker heals: a later message is consumed', async () => {
    await expect(broker.publish(name('nada'), 'x', Buffer.from('x'))).rejects.toThrow();
    const queue = name('after');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { exclusive: true, durable: false });
    });
    const seen: string[] = [];
    await broker.consume(queue, async (message) => {
      seen.push(message.content.toString());
    });
    await broker.publish('', queue, Buffer.from('ok'));
    await until(() => seen.length > 0);
    expect(seen).toEqual(['ok']);
  });

  it('When a queue is checked, then its depth and consumers are answered; a missing one is a 404 that leaves the next checks working, after a reconnection too', async () => {
    const queue = name('check');
    const missing = name('missing');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { autoDelete: true, durable: false });
    });
    await broker.publish('', queue, Buffer.from('a'));
    await broker.publish('', queue, Buffer.from('b'));
    await expect(broker.checkQueue(queue)).resolves.toMatchObject({ queue, messageCount: 2, consumerCount: 0 });

    // Checked at once with the existing one: only the missing queue's own check fails.
    const [semFila, comFila] = await Promise.allSettled([broker.checkQueue(missing), broker.checkQueue(queue)]);
    expect(semFila).toMatchObject({ status: 'rejected', reason: { code: 404 } });
    expect(comFila).toMatchObject({ status: 'fulfilled', value: { messageCount: 2 } });
    await broker.withChannel(async (ch) => {
      await ch.assertQueue(missing, { autoDelete: false, durable: false });
    });
    await expect(broker.checkQueue(missing)).resolves.toMatchObject({ messageCount: 0 });

    const reconnected = new Promise((resolve) => broker.once('connected', resolve));
    // biome-ignore lint/suspicious/noExplicitAny: reaching the live connection to cut it, as a network failure would
    await (broker as any).connection.close();
    await reconnected;
    await expect(broker.checkQueue(queue)).resolves.toMatchObject({ queue });
    await broker.withChannel((ch) => ch.deleteQueue(missing));
  });

  it('When RabbitMQ cannot be reached, then start fails with a clear message instead of hanging', async () => {
    const nowhere = new Broker(at(rabbitHost, 1), logger, { name: 'nowhere', connectTimeoutMs: 300 });
    await expect(nowhere.start()).rejects.toThrow(/cannot reach RabbitMQ/);
  });
});

describe('Broker under failure', () => {
  it('When the channel closes while a handler runs, then the process survives and the message is redelivered', async () => {
    const queue = name('midflight');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { durable: false, autoDelete: false });
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const seen: boolean[] = [];
    await broker.consume(queue, async (message) => {
      seen.push(message.fields.redelivered);
      if (seen.length === 1) await gate;
    });
    await broker.publish('', queue, Buffer.from('x'));
    await until(() => seen.length === 1);
    const reconnected = new Promise((resolve) => broker.once('connected', resolve));
    // biome-ignore lint/suspicious/noExplicitAny: cutting the live connection, as a network failure would
    await (broker as any).connection.close();
    release();
    await reconnected;
    await until(() => seen.length === 2);
    expect(seen).toEqual([false, true]);
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
    await broker.withChannel((ch) => ch.deleteQueue(queue));
  });

  it('When a consumed queue is gone at a reconnection, then the connection and the other consumers come back, and that consumer alone resumes once its queue exists again', async () => {
    const stays = name('stays');
    const gone = name('gone');
    await broker.declare(async (ch) => {
      await ch.assertQueue(stays, { durable: false, autoDelete: false });
    });
    await broker.withChannel((ch) => ch.assertQueue(gone, { durable: false, autoDelete: false }));
    const seen: string[] = [];
    await broker.consume(stays, async (message) => {
      seen.push(message.content.toString());
    });
    await broker.consume(gone, async (message) => {
      seen.push(message.content.toString());
    });
    // Deleted by someone else (a destination's queue removed by another worker), then the connection drops.
    await broker.withChannel((ch) => ch.deleteQueue(gone));
    const reconnected = new Promise((resolve) => broker.once('connected', resolve));
    // biome-ignore lint/suspicious/noExplicitAny: reaching the live connection to cut it, as a network failure would
    await (broker as any).connection.close();
    await reconnected;
    await broker.publish('', stays, Buffer.from('ainda'));
    await until(() => seen.includes('ainda'));
    await broker.withChannel((ch) => ch.assertQueue(gone, { durable: false, autoDelete: false }));
    await broker.publish('', gone, Buffer.from('de volta'));
    await until(() => seen.includes('de volta'), 40_000);
    await broker.withChannel(async (ch) => {
      await ch.deleteQueue(gone);
      await ch.deleteQueue(stays);
    });
  }, 60_000);

  it('When the broker cancels a consumer (its queue deleted and declared again), then it consumes again', async () => {
    const queue = name('cancelled');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { durable: false, autoDelete: false });
    });
    const seen: string[] = [];
    await broker.consume(queue, async (message) => {
      seen.push(message.content.toString());
    });
    await broker.withChannel((ch) => ch.deleteQueue(queue));
    await broker.withChannel((ch) => ch.assertQueue(queue, { durable: false, autoDelete: false }));
    await broker.publish('', queue, Buffer.from('de novo'));
    await until(() => seen.includes('de novo'));
    await broker.withChannel((ch) => ch.deleteQueue(queue));
  });

  it('When the connection to RabbitMQ is lost and stays lost, then publish fails after its wait instead of hanging', async () => {
    // A TCP relay to RabbitMQ that can be cut, as a network failure would.
    const sockets = new Set<net.Socket>();
    const relay = net.createServer((client) => {
      const upstream = net.connect(rabbitPort, rabbitHost);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as net.AddressInfo).port;
    const cut = new Broker(at('127.0.0.1', port), logger, { name: 'cut', publishWaitMs: 500 });
    await cut.start();
    const lost = new Promise((resolve) => cut.once('disconnected', resolve));
    relay.close();
    for (const socket of sockets) socket.destroy();
    await lost;
    const started = Date.now();
    await expect(cut.publish('', 'qualquer', Buffer.from('x'))).rejects.toThrow(/not reachable/);
    expect(Date.now() - started).toBeLessThan(5_000);
    await cut.close();
  });

  it('When the link to RabbitMQ goes silent while a publish waits for its confirm, then the publish fails after its wait instead of waiting for the heartbeat', async () => {
    // A relay that can stop carrying bytes without closing anything, as a stalled network would.
    const sockets = new Set<net.Socket>();
    let silent = false;
    const relay = net.createServer((client) => {
      const upstream = net.connect(rabbitPort, rabbitHost);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        sockets.add(from);
        from.on('error', () => undefined);
        from.on('data', (chunk) => {
          if (!silent) to.write(chunk);
        });
      }
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as net.AddressInfo).port;
    const stalled = new Broker(at('127.0.0.1', port), logger, { name: 'stalled', publishWaitMs: 500 });
    await stalled.start();
    const lost = new Promise((resolve) => stalled.once('disconnected', resolve));
    try {
      silent = true;
      const started = Date.now();
      await expect(stalled.publish('', name('stalled'), Buffer.from('x'))).rejects.toThrow(/did not confirm/);
      // The library would hold it until the heartbeat gives the connection up (about 10 s).
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      relay.close();
      for (const socket of sockets) socket.destroy();
      await lost;
      await stalled.close();
    }
  });

  it('When a mandatory message reaches no queue, then its publish rejects instead of being confirmed silently', async () => {
    const exchange = name('sem-fila');
    const queue = name('com-fila');
    await broker.declare(async (ch) => {
      await ch.assertExchange(exchange, 'direct', { durable: false, autoDelete: true });
      await ch.assertQueue(queue, { durable: false, autoDelete: true });
      await ch.bindQueue(queue, exchange, 'ligada');
    });
    await expect(
      broker.publish(exchange, 'sem-ligacao', Buffer.from('perdida'), { mandatory: true }),
    ).rejects.toBeInstanceOf(UnroutableError);
    // The same unroutable message without mandatory is confirmed (and dropped) by RabbitMQ.
    await expect(broker.publish(exchange, 'sem-ligacao', Buffer.from('perdida'))).resolves.toBeUndefined();
    // A routable mandatory message is confirmed and stored; the channel still works after a return.
    await broker.publish(exchange, 'ligada', Buffer.from('guardada'), { mandatory: true });
    const got = await broker.withChannel((ch) => ch.get(queue, { noAck: true }));
    expect(got ? got.content.toString() : null).toBe('guardada');
    await broker.withChannel((ch) => ch.deleteQueue(queue));
  });

  it('When a handler throws RequeueMessage, then the message goes back to the queue at once, unchanged', async () => {
    const queue = name('devolver');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { autoDelete: true, durable: false });
    });
    const seen: { body: string; redelivered: boolean }[] = [];
    await broker.consume(queue, async (message) => {
      seen.push({ body: message.content.toString(), redelivered: message.fields.redelivered });
      if (seen.length === 1) throw new RequeueMessage('stopping');
    });
    await broker.publish('', queue, Buffer.from('volta'));
    await until(() => seen.length === 2);
    expect(seen).toEqual([
      { body: 'volta', redelivered: false },
      { body: 'volta', redelivered: true },
    ]);
    await broker.withChannel((ch) => ch.deleteQueue(queue));
  });
});
