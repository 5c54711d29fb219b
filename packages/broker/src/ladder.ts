import type { Channel, Options } from 'amqplib';

/**
 * The platform's one retry ladder (docs/decisions/one-retry-ladder.md): every message that waits
 * before its next attempt — a delivery job of the worker, any consumer's retry, a wait for a
 * dependency that is down — waits here, and every step of the platform is declared in this module.
 *
 * A headers exchange routes on DELAY_HEADER to one quorum queue per step (`hub.atraso.<ms>ms`),
 * whose TTL dead-letters the message through the default exchange with the routing key it was
 * published with: the name of the queue it goes back to. So one queue per step serves every
 * consumer of the virtual host, a short step never waits behind a long one, and no queue of a
 * consumer needs companions of its own. Quorum queues, because on a cluster a classic queue lives on
 * one node and its (re)declaration fails while that node is down; at-least-once dead-lettering (it
 * needs reject-publish), so a message is never dropped on its way back.
 */
export const RETRY_EXCHANGE = 'hub.atraso';
export const retryQueueName = (stepMs: number) => `${RETRY_EXCHANGE}.${stepMs}ms`;
/** The step a message waits in. Headers exchanges ignore headers that start with `x-`, hence the name. */
export const DELAY_HEADER = 'hub-atraso-ms';

/** Any consumer's retries unless it gives its own: 1 s doubling up to 60 s (the last one repeats), 10 attempts. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000];
export const DEFAULT_MAX_ATTEMPTS = 10;

/**
 * The delivery worker's consumers (a job whose claim or record met the database or the broker down):
 * shorter steps and more attempts than the default, as an outage of a dependency is no bad message.
 */
export const DELIVERY_CONSUMER_RETRY = { delaysMs: [1_000, 5_000, 15_000, 30_000], maxAttempts: 20 } as const;

/**
 * The default of DELIVERY_RETRY_DELAYS: a delivery's attempts against its destination, 5 s up to 4 h
 * (the last one repeats). hub-api and the worker read the variable through `deliveryRetryDelaysFromEnv`.
 */
export const DELIVERY_RETRY_DELAYS_MS: readonly number[] = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000,
];

/** Where a message published to wait `stepMs` goes, to come back to `queue` once the step is over. */
export function retryRoute(
  stepMs: number,
  queue: string,
): { exchange: string; routingKey: string; headers: Record<string, string> } {
  return { exchange: RETRY_EXCHANGE, routingKey: queue, headers: { [DELAY_HEADER]: String(stepMs) } };
}

/** The arguments of a step's queue: a queue cannot change them under its name (a new name if they change). */
export function retryQueueOptions(stepMs: number): Options.AssertQueue {
  return {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      'x-message-ttl': stepMs,
      'x-dead-letter-exchange': '',
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    },
  };
}

/** The ladder's exchange and the queue of every step given, idempotently (any process, at any moment). */
export async function declareRetryLadder(channel: Channel, stepsMs: readonly number[]): Promise<void> {
  await channel.assertExchange(RETRY_EXCHANGE, 'headers', { durable: true });
  for (const stepMs of new Set(stepsMs)) {
    if (!(Number.isInteger(stepMs) && stepMs > 0))
      throw new Error(`a retry step must be a whole number of ms above 0, not ${stepMs}`);
    const queue = retryQueueName(stepMs);
    await channel.assertQueue(queue, retryQueueOptions(stepMs));
    await channel.bindQueue(queue, RETRY_EXCHANGE, '', { 'x-match': 'all', [DELAY_HEADER]: String(stepMs) });
  }
}
