// The drivers the floor uses, the workspace's own copies (pg from @hub/database, amqplib from
// @hub/broker), so the floor adds no dependency and runs on the very clients the platform runs on.
import { createRequire } from 'node:module';
import path from 'node:path';
import { DELIVERY_RETRY_DELAYS_MS } from '../../packages/broker/src/ladder';

const root = path.resolve(__dirname, '../..');

export interface PgPool {
  query(text: string, values?: unknown[]): Promise<{ rowCount: number | null }>;
  end(): Promise<void>;
}
export const pg = createRequire(path.join(root, 'packages/database/package.json'))('pg') as {
  Pool: new (options: { connectionString: string; max: number }) => PgPool;
  Client: new (options: { connectionString: string }) => PgPool & { connect(): Promise<void> };
};

export interface AmqpMessage {
  content: Buffer;
  properties: { messageId?: string; headers?: Record<string, unknown> };
}
export interface AmqpChannel {
  assertQueue(queue: string, options: { durable: boolean; arguments?: Record<string, unknown> }): Promise<unknown>;
  publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: { persistent: boolean; messageId: string; headers?: Record<string, unknown> },
    confirmed?: (error: unknown) => void,
  ): boolean;
  prefetch(count: number): Promise<unknown>;
  consume(queue: string, onMessage: (message: AmqpMessage | null) => void): Promise<unknown>;
  ack(message: AmqpMessage): void;
  close(): Promise<void>;
}
export const amqp = createRequire(path.join(root, 'packages/broker/package.json'))('amqplib') as {
  connect(url: string): Promise<{ createConfirmChannel(): Promise<AmqpChannel>; close(): Promise<void> }>;
};

/** The work queue, a quorum queue like the platform's. */
export const FILA = 'chao.entregas';
/** The platform's retry steps (DELIVERY_RETRY_DELAYS' default, the last one repeating), from its one declaration. */
export const ATRASOS_MS = DELIVERY_RETRY_DELAYS_MS;
/** The delay queue of a job's nth failure: its TTL sends the job back to the work queue. */
export const filaDeAtraso = (falhas: number) =>
  `chao.entregas.atraso.${ATRASOS_MS[Math.min(falhas, ATRASOS_MS.length) - 1]}ms`;

export async function declararFilas(channel: AmqpChannel): Promise<void> {
  await channel.assertQueue(FILA, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  for (const [i, ttl] of ATRASOS_MS.entries())
    await channel.assertQueue(filaDeAtraso(i + 1), {
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-message-ttl': ttl,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': FILA,
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    });
}

/** Publishes with confirms; resolves when the broker has confirmed every one (rejects on a nack). */
export function publicarConfirmado(
  channel: AmqpChannel,
  jobs: { fila: string; id: string; corpo: Buffer; headers?: Record<string, unknown> }[],
): Promise<void> {
  if (jobs.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    let faltam = jobs.length;
    for (const job of jobs)
      channel.publish(
        '',
        job.fila,
        job.corpo,
        { persistent: true, messageId: job.id, headers: job.headers },
        (erro) => {
          if (erro) reject(new Error('the broker refused a job'));
          else if (--faltam === 0) resolve();
        },
      );
  });
}
