import type { ConsumeMessage } from 'amqplib';
import type { z } from 'zod';
import type { Broker, ConsumeOptions } from './broker';
import { InvalidMessageError } from './failure';

/** A message kind: where it is published and what its body must look like. */
export interface MessageDefinition<S extends z.ZodType> {
  exchange: string;
  routingKey: string;
  schema: S;
}

export const defineMessage = <S extends z.ZodType>(definition: MessageDefinition<S>) => definition;

export function encode<S extends z.ZodType>(definition: MessageDefinition<S>, body: z.input<S>): Buffer {
  return Buffer.from(JSON.stringify(definition.schema.parse(body)));
}

export function decode<S extends z.ZodType>(definition: MessageDefinition<S>, message: ConsumeMessage): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(message.content.toString('utf8'));
  } catch {
    throw new InvalidMessageError('message body is not JSON');
  }
  const parsed = definition.schema.safeParse(json);
  if (!parsed.success) throw new InvalidMessageError(`message breaks its schema: ${parsed.error.message}`);
  return parsed.data;
}

/** Validates the body against its definition, then publishes it with a confirm. */
export function publishMessage<S extends z.ZodType>(
  broker: Broker,
  definition: MessageDefinition<S>,
  body: z.input<S>,
  options: { messageId?: string; headers?: Record<string, unknown>; mandatory?: boolean; expiration?: string } = {},
): Promise<void> {
  return broker.publish(definition.exchange, definition.routingKey, encode(definition, body), options);
}

/**
 * Consumes a queue of one message kind. A message that breaks its schema can never succeed, so it
 * is rejected (to the dead-letter exchange when the queue has one) instead of looping.
 */
export async function consumeMessages<S extends z.ZodType>(
  broker: Broker,
  queue: string,
  definition: MessageDefinition<S>,
  handler: (body: z.output<S>, message: ConsumeMessage) => Promise<void>,
  options: ConsumeOptions = {},
): Promise<void> {
  await broker.consume(
    queue,
    async (message) => {
      await handler(decode(definition, message), message);
    },
    options,
  );
}
