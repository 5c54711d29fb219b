export type { Channel, ConsumeMessage } from 'amqplib';
export * from './broker';
export * from './catalog';

/** Arguments of a durable quorum queue, optionally dead-lettering to an exchange. */
export function quorumQueue(deadLetterExchange?: string): { durable: true; arguments: Record<string, unknown> } {
  return {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      ...(deadLetterExchange ? { 'x-dead-letter-exchange': deadLetterExchange } : {}),
    },
  };
}
