import { createLogger } from '@hub/log';
import type { ConsumeMessage } from 'amqplib';
import { ATTEMPT_HEADER, Broker, type ConsumeOptions } from './broker';
import { classifyFailure, FinalError, InvalidMessageError, naoRepetir, retryDelay } from './failure';
import { quorumQueue } from './index';

const RABBITMQ_URL = process.env.RABBITMQ_URL;
if (!RABBITMQ_URL) throw new Error('RABBITMQ_URL is not set (jest.config.js sets it up for the tests)');
const logger = createLogger('broker-failure-test');
const name = (what: string) => `test.broker.${what}.${process.pid}.${Date.now()}`;

let broker: Broker;
const cleanup: ((broker: Broker) => Promise<void>)[] = [];
beforeEach(async () => {
  broker = await new Broker(RABBITMQ_URL, logger, { name: 'broker-failure-test' }).start();
});
afterEach(async () => {
  try {
    for (const step of cleanup.splice(0)) await step(broker);
  } finally {
    // Closed even when a step failed: a broker left open keeps jest from exiting.
    await broker.close();
  }
});

async function until<T>(check: () => T | undefined | false, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A queue whose rejected messages go to `<queue>.mortas` (a fanout exchange and a queue), deleted after the test. */
async function queueWithDeadLetters(what: string, options: { quorum?: { deliveryLimit: number } } = {}) {
  const queue = name(what);
  const mortas = `${queue}.mortas`;
  await broker.declare(async (ch) => {
    await ch.assertExchange(mortas, 'fanout', { durable: false, autoDelete: false });
    await ch.assertQueue(mortas, { durable: false });
    await ch.bindQueue(mortas, mortas, '');
    await ch.assertQueue(
      queue,
      options.quorum
        ? quorumQueue({ deadLetterExchange: mortas, deliveryLimit: options.quorum.deliveryLimit })
        : { durable: false, arguments: { 'x-dead-letter-exchange': mortas } },
    );
  });
  cleanup.push(async (b) => {
    await b.withChannel(async (ch) => {
      await ch.deleteQueue(queue);
      await ch.deleteQueue(mortas);
      await ch.deleteExchange(mortas);
    });
  });
  const depth = () =>
    broker.withChannel(async (ch) => ({
      fila: (await ch.checkQueue(queue)).messageCount,
      mortas: (await ch.checkQueue(mortas)).messageCount,
    }));
  const dead = async () => {
    for (let tries = 0; tries < 1500; tries += 1) {
      // The poison test cuts the connection again and again: a look during a cut is tried again.
      const message = await broker.withChannel(async (ch) => ch.get(mortas, { noAck: true })).catch(() => undefined);
      if (message) return message;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`nothing reached ${mortas}`);
  };
  return { queue, mortas, depth, dead };
}

/** Consumes `queue`, recording every delivery by body with the time it arrived. */
async function consumeRecording(
  queue: string,
  outcome: (body: string, attempt: number) => void,
  options: ConsumeOptions = {},
) {
  const deliveries: { body: string; at: number; message: ConsumeMessage }[] = [];
  await broker.consume(
    queue,
    async (message) => {
      const body = message.content.toString();
      deliveries.push({ body, at: Date.now(), message });
      outcome(body, deliveries.filter((d) => d.body === body).length);
    },
    options,
  );
  const of = (body: string) => deliveries.filter((d) => d.body === body);
  return { deliveries, of };
}

const deaths = (message: { properties: { headers?: Record<string, unknown> } }) =>
  (message.properties.headers?.['x-death'] ?? []) as { queue: string; reason: string; count: number }[];

describe('Failure classification (pure rules)', () => {
  it('When a handler throws an InvalidMessageError, a FinalError or what isFinal names, then the failure is final; anything else is retryable', () => {
    expect(classifyFailure(new InvalidMessageError('x'))).toBe('final');
    expect(classifyFailure(naoRepetir(new Error('recusado')))).toBe('final');
    expect(classifyFailure(new Error('banco fora'))).toBe('retryable');
    expect(classifyFailure(new Error('banco fora'), (e) => (e as Error).message === 'recusado')).toBe('retryable');
    expect(classifyFailure(new Error('recusado'), (e) => (e as Error).message === 'recusado')).toBe('final');
  });

  it('When an error is wrapped with naoRepetir, then it keeps its message and cause, and a FinalError is not wrapped twice', () => {
    const cause = new Error('valor nulo');
    const wrapped = naoRepetir(cause);
    expect(wrapped).toBeInstanceOf(FinalError);
    expect(wrapped.message).toBe('valor nulo');
    expect(wrapped.cause).toBe(cause);
    expect(naoRepetir(wrapped)).toBe(wrapped);
  });

  it('When retries are planned, then each wait lies in the upper half of its step, steps grow to the last one and stay there', () => {
    const delays = [1_000, 2_000, 4_000];
    expect(retryDelay(2, delays, () => 0)).toEqual({ stepMs: 1_000, expirationMs: 500 });
    expect(retryDelay(2, delays, () => 0.999_999)).toEqual({ stepMs: 1_000, expirationMs: 1_000 });
    expect(retryDelay(3, delays, () => 0.5).stepMs).toBe(2_000);
    expect(retryDelay(4, delays, () => 0.5).stepMs).toBe(4_000);
    expect(retryDelay(40, delays, () => 0.5).stepMs).toBe(4_000);
    expect(retryDelay(2).stepMs).toBe(1_000);
    expect(retryDelay(99).stepMs).toBe(60_000);
  });
});

describe('Broker failure handling', () => {
  it('When a handler fails for good, then the message reaches the dead-letter queue once and is not delivered again', async () => {
    const { queue, depth, dead } = await queueWithDeadLetters('final');
    const { of } = await consumeRecording(
      queue,
      (body) => {
        if (body === 'sem-conserto') throw naoRepetir(new Error('os dados nunca serão aceitos'));
        if (body === 'recusado') throw new Error('recusado pelo banco');
      },
      { isFinal: (error) => (error as Error).message === 'recusado pelo banco', retry: { delaysMs: [50] } },
    );
    await broker.publish('', queue, Buffer.from('sem-conserto'));
    await broker.publish('', queue, Buffer.from('recusado'));
    const mortas = [await dead(), await dead()];
    expect(mortas.map((m) => m.content.toString()).sort()).toEqual(['recusado', 'sem-conserto']);
    for (const morta of mortas) {
      expect(deaths(morta)).toEqual([expect.objectContaining({ queue, reason: 'rejected', count: 1 })]);
    }
    // A later message is handled, and by then a redelivery (at 50 ms) would have shown up too.
    await broker.publish('', queue, Buffer.from('depois'));
    await until(() => of('depois').length === 1, 'the later message');
    await new Promise((r) => setImmediate(r));
    expect([of('sem-conserto').length, of('recusado').length]).toEqual([1, 1]);
    expect(await depth()).toEqual({ fila: 0, mortas: 0 });
  });

  it('When a handler fails for a passing reason, then the message is tried again after growing delays and then succeeds', async () => {
    const { queue, depth } = await queueWithDeadLetters('passing');
    const delaysMs = [100, 200, 400];
    const { of } = await consumeRecording(
      queue,
      (_body, attempt) => {
        if (attempt <= 3) throw new Error('banco fora do ar');
      },
      { retry: { delaysMs, maxAttempts: 5 } },
    );
    await broker.publish('', queue, Buffer.from('volta'), { messageId: 'm-1', headers: { origem: 'teste' } });
    const tentativas = await until(() => of('volta').length === 4 && of('volta'), 'the fourth attempt');
    const gaps = tentativas.slice(1).map((t, i) => t.at - tentativas[i]!.at);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(delaysMs[i]! / 2);
    });
    expect(gaps[2]).toBeGreaterThan(gaps[0]!);
    expect(tentativas.map((t) => t.message.properties.headers?.[ATTEMPT_HEADER])).toEqual([undefined, 2, 3, 4]);
    // The retried message is the same message: its id and the publisher's headers travel with it.
    expect(tentativas[3]!.message.properties).toMatchObject({ messageId: 'm-1', headers: { origem: 'teste' } });
    await until(() => broker.connected, 'connected');
    expect(await depth()).toEqual({ fila: 0, mortas: 0 });
  });

  it('When a dependency stays unavailable for more tries than maxAttempts, then the waits are not counted and the message is handled once it is back', async () => {
    const { queue, depth } = await queueWithDeadLetters('unavailable');
    class Fora extends Error {}
    const { of } = await consumeRecording(
      queue,
      (_body, attempt) => {
        if (attempt <= 5) throw new Fora('banco fora do ar');
        if (attempt === 6) throw new Error('a real failure after the outage');
      },
      { retry: { delaysMs: [20, 40], maxAttempts: 2 }, isUnavailable: (error) => error instanceof Fora },
    );
    await broker.publish('', queue, Buffer.from('paciente'));
    const tentativas = await until(() => of('paciente').length === 7 && of('paciente'), 'the seventh try');
    // Five waits keep attempt 1; the real failure after them is attempt 1 and counts (the 7th try is attempt 2).
    expect(tentativas.map((t) => t.message.properties.headers?.[ATTEMPT_HEADER])).toEqual([
      undefined,
      1,
      1,
      1,
      1,
      1,
      2,
    ]);
    // The seventh succeeded: nothing dead-lettered, nothing left.
    await until(() => broker.connected, 'connected');
    expect(await depth()).toEqual({ fila: 0, mortas: 0 });
  });

  it('When a handler always fails, then the message is tried maxAttempts times and then rests in the dead-letter queue', async () => {
    const { queue, depth, dead } = await queueWithDeadLetters('always');
    const { of } = await consumeRecording(
      queue,
      () => {
        throw new Error('sempre fora');
      },
      { retry: { delaysMs: [20, 40], maxAttempts: 4 } },
    );
    await broker.publish('', queue, Buffer.from('teimosa'));
    const morta = await dead();
    expect(morta.content.toString()).toBe('teimosa');
    expect(morta.properties.headers?.[ATTEMPT_HEADER]).toBe(4);
    expect(deaths(morta)).toContainEqual(expect.objectContaining({ queue, reason: 'rejected', count: 1 }));
    expect(of('teimosa')).toHaveLength(4);
    // Nothing left anywhere to bring it back: a later message is the next thing the handler sees.
    await broker.publish('', queue, Buffer.from('seguinte'));
    await until(() => of('seguinte').length === 4, 'the later message to use its attempts');
    expect(of('teimosa')).toHaveLength(4);
    await dead();
    expect(await depth()).toEqual({ fila: 0, mortas: 0 });
  });

  it('When one message is waiting for its retry, then the other messages of the queue keep flowing', async () => {
    const { queue, depth } = await queueWithDeadLetters('flowing');
    const order: string[] = [];
    // One message at a time: a retry held by the consumer would stop the whole queue.
    await consumeRecording(
      queue,
      (body, attempt) => {
        order.push(`${body}#${attempt}`);
        if (body === 'lenta' && attempt === 1) throw new Error('dependência fora');
      },
      { prefetch: 1, retry: { delaysMs: [1_500] } },
    );
    await broker.publish('', queue, Buffer.from('lenta'));
    for (let i = 0; i < 5; i += 1) await broker.publish('', queue, Buffer.from(`rapida-${i}`));
    await until(() => order.includes('lenta#2'), 'the retried message');
    expect(order.indexOf('lenta#1')).toBe(0);
    expect(order.indexOf('lenta#2')).toBe(6);
    expect(order.slice(1, 6).sort()).toEqual(['rapida-0#1', 'rapida-1#1', 'rapida-2#1', 'rapida-3#1', 'rapida-4#1']);
    expect(await depth()).toEqual({ fila: 0, mortas: 0 });
  });

  it('When a message kills its consumer every time it is delivered, then the quorum queue stops at its delivery limit and dead-letters it', async () => {
    const deliveryLimit = 2;
    const { queue, depth, dead } = await queueWithDeadLetters('poison', { quorum: { deliveryLimit } });
    let release!: () => void;
    const never = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanup.unshift(async () => release());
    const seen: number[] = [];
    const sadias: string[] = [];
    let reconexoes = 0;
    broker.on('connected', () => {
      reconexoes += 1;
    });
    await broker.consume(queue, async (message) => {
      if (message.content.toString() !== 'veneno') {
        sadias.push(message.content.toString());
        return;
      }
      seen.push(Number(message.properties.headers?.['x-delivery-count'] ?? 0));
      // As a crash would: the connection goes while the handler still holds the message unacked.
      // biome-ignore lint/suspicious/noExplicitAny: reaching the live connection to cut it
      await (broker as any).connection.close();
      await never;
    });
    // Published on a connection of its own: on the consumer's, its confirm could come after the
    // delivery whose handler cuts that connection, and the publish would fail with 'channel closed'.
    const publicador = await new Broker(RABBITMQ_URL, logger, { name: 'broker-failure-test publisher' }).start();
    try {
      await publicador.publish('', queue, Buffer.from('veneno'));
    } finally {
      await publicador.close();
    }
    const morta = await dead();
    expect(morta.content.toString()).toBe('veneno');
    expect(deaths(morta)).toEqual([expect.objectContaining({ queue, reason: 'delivery_limit' })]);
    expect(seen).toEqual([0, 1, 2]);
    expect(seen).toHaveLength(deliveryLimit + 1);
    // Each kill is followed by a reconnection, and the last one may still be under way: a publish on
    // the closing connection would fail (its caller retries, as the relay does).
    await until(() => reconexoes === seen.length, 'the broker connected again after the last kill');
    // The last kill's reconnection may still be settling: a caller retries a publish or a read that met
    // the closing connection (as the relay does).
    const persistindo = async <T>(fazer: () => Promise<T>): Promise<T> => {
      for (let tentativa = 1; ; tentativa++) {
        try {
          return await fazer();
        } catch (error) {
          if (tentativa >= 50) throw error;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    await persistindo(() => broker.publish('', queue, Buffer.from('sadia')));
    await until(() => sadias.includes('sadia'), 'a healthy message after the poison');
    expect(await persistindo(depth)).toEqual({ fila: 0, mortas: 0 });
  });
});
