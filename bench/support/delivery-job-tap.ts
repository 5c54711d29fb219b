// A copy of every delivery job, for benchmarks that time when jobs reach RabbitMQ's queues.
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { trabalhoDeEntrega } from '../../packages/contracts/src';

/** The part of amqplib used here (the workspace's copy, a dependency of @hub/broker). */
interface AmqpChannel {
  assertQueue(queue: string, options: { exclusive: boolean; autoDelete: boolean }): Promise<{ queue: string }>;
  bindQueue(queue: string, exchange: string, routingKey: string): Promise<unknown>;
  consume(
    queue: string,
    onMessage: (message: { properties: { messageId?: string } } | null) => void,
    options: { noAck: boolean },
  ): Promise<unknown>;
  close(): Promise<void>;
}
const amqp = createRequire(path.resolve(__dirname, '../../packages/broker/package.json'))('amqplib') as {
  connect(url: string): Promise<{ createChannel(): Promise<AmqpChannel>; close(): Promise<void> }>;
};

/**
 * Every delivery job published on `url`'s vhost: message id (the delivery id) → when it reached this
 * consumer (performance.now()), through an exclusive queue bound beside the work queue to the jobs'
 * exchange with their routing key. A job counts once the broker has routed and stored it.
 */
export async function copiarTrabalhos(url: string) {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  const chegadas = new Map<string, number>();
  let repetidas = 0;
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, trabalhoDeEntrega.exchange, trabalhoDeEntrega.routingKey);
  await channel.consume(
    queue,
    (message) => {
      if (!message) return;
      const id = message.properties.messageId ?? '';
      if (chegadas.has(id)) repetidas++;
      else chegadas.set(id, performance.now());
    },
    { noAck: true },
  );
  return {
    chegadas,
    repetidas: () => repetidas,
    close: async () => {
      await channel.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}
