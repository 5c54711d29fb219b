export type { Channel, ConsumeMessage } from 'amqplib';
export * from './broker';
export * from './catalog';
export * from './failure';
export * from './jitter';
export * from './ladder';
export * from './ladder-migration';

/** How a consuming queue of the platform is declared. */
export interface QuorumQueueOptions {
  /** Where rejected, expired or over-delivered messages go. */
  deadLetterExchange?: string;
  /**
   * Deliveries after which RabbitMQ dead-letters a message instead of delivering it again: a poison
   * message that kills its consumer (channel or process) before the ack cannot loop forever.
   */
  deliveryLimit?: number;
}

/** Arguments of a durable quorum queue; a string is the dead-letter exchange (the earlier signature). */
export function quorumQueue(options: string | QuorumQueueOptions = {}): {
  durable: true;
  arguments: Record<string, unknown>;
} {
  const { deadLetterExchange, deliveryLimit } = typeof options === 'string' ? { deadLetterExchange: options } : options;
  return {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      ...(deadLetterExchange ? { 'x-dead-letter-exchange': deadLetterExchange } : {}),
      ...(deliveryLimit ? { 'x-delivery-limit': deliveryLimit } : {}),
    },
  };
}
