import type { createRepeatLimiter, Logger } from '@hub/log';
import type { Channel, ConsumeMessage, Options } from 'amqplib';
import type { ChannelAcks } from './acks';
import type { Consumer } from './consumers';
import { classifyFailure, type RetryDelay, retryDelay } from './failure';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY_DELAYS_MS, retryRoute } from './ladder';

/** The attempt a delivery is (absent on the first); on a dead-lettered message, the attempt that failed last. */
export const ATTEMPT_HEADER = 'hub-tentativa';
/** How many times in a row the message waited for an unavailable dependency (not counted as attempts). */
export const WAITS_HEADER = 'hub-esperas';

/**
 * Thrown by a handler that did not handle its message and wants it back in the queue as it is, at
 * once (a consumer stopping): nacked with requeue, not retried through the delay queues.
 */
export class RequeueMessage extends Error {
  override name = 'RequeueMessage';
}

/** What settling a message needs of its broker. */
export interface SettleDeps {
  logger: Logger;
  /** Warnings that every message repeats while a dependency is away, written once per 10 s. */
  repeated: ReturnType<typeof createRepeatLimiter>;
  /** A publish the broker has confirmed (the retry's copy in its delay queue). */
  publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void>;
}

/** What becomes of a message whose handler failed. */
export type Outcome =
  | { kind: 'requeue' }
  | { kind: 'dead-letter'; why: 'final' | 'last attempt' }
  | { kind: 'retry'; unavailable: boolean; attempt: number; waits: number; delay: RetryDelay };

/**
 * The rule for a failed message, given its attempt and waits so far: a RequeueMessage goes back as
 * it is; a final failure, or a real one on the last attempt, is dead-lettered; anything else waits
 * in the retry ladder. A wait for a dependency (`isUnavailable`) keeps the attempt and grows a
 * backoff of its own, so an outage longer than the policy dead-letters nothing.
 */
export function outcomeOf(
  failure: unknown,
  options: Consumer['options'],
  message: Pick<ConsumeMessage, 'properties'>,
  random: () => number = Math.random,
): Outcome {
  if (failure instanceof RequeueMessage) return { kind: 'requeue' };
  const attempt = attemptOf(message);
  const final = options.onFailure === 'reject' || classifyFailure(failure, options.isFinal) === 'final';
  const unavailable = !final && options.isUnavailable?.(failure) === true;
  if (!unavailable && final) return { kind: 'dead-letter', why: 'final' };
  if (!unavailable && attempt >= (options.retry?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS)) {
    return { kind: 'dead-letter', why: 'last attempt' };
  }
  const waits = unavailable ? waitsOf(message) + 1 : 0;
  const delaysMs = options.retry?.delaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const delay = retryDelay(unavailable ? waits + 1 : attempt + 1, delaysMs, random);
  return { kind: 'retry', unavailable, attempt, waits, delay };
}

/**
 * Runs the handler, then acks. A final failure, or one that used up its attempts, is nacked without
 * requeue (to the queue's dead-letter exchange). A retryable one is published again to the delay
 * queue of its step, with its attempt in a header, and only then acked: the wait happens in
 * RabbitMQ, not in this consumer's prefetch, so the other messages of the queue keep flowing and a
 * crash during the wait loses nothing. If the channel closed meanwhile, ack and nack are impossible
 * and unnecessary: the broker redelivers every unacknowledged message of a closed channel.
 */
export async function settle(
  deps: SettleDeps,
  channel: Channel,
  consumer: Consumer,
  message: ConsumeMessage,
  acks?: ChannelAcks,
): Promise<void> {
  let failure: unknown;
  try {
    await consumer.handler(message);
  } catch (error) {
    failure = error;
  }
  if (failure === undefined) {
    if (acks) await acks.ack(message);
    else channel.ack(message);
    return;
  }
  const outcome = outcomeOf(failure, consumer.options, message);
  const context = {
    err: failure,
    queue: consumer.queue,
    attempt: attemptOf(message),
    redelivered: message.fields.redelivered,
  };
  // A retry that could not be scheduled goes back to its queue as it is.
  let requeue = outcome.kind === 'requeue';
  if (outcome.kind === 'retry') {
    logRetry(deps, context, outcome);
    requeue = !(await scheduleRetry(deps, consumer, message, outcome));
  } else if (outcome.kind === 'dead-letter') {
    deps.logger.error(
      context,
      outcome.why === 'final'
        ? 'message handler failed for good; dead-lettered'
        : 'message handler failed on its last attempt; dead-lettered',
    );
  }
  // Closed only now: until the retry's copy is confirmed, no batched ack may cover the original.
  acks?.closed(message);
  if (outcome.kind === 'dead-letter') channel.nack(message, false, false);
  else if (requeue) channel.nack(message, false, true);
  else channel.ack(message);
}

function logRetry(deps: SettleDeps, context: Record<string, unknown>, retry: Extract<Outcome, { kind: 'retry' }>) {
  const write = (omitidas = 0) =>
    deps.logger.warn(
      {
        ...context,
        retry_in_ms: retry.delay.expirationMs,
        ...(retry.unavailable ? { waits: retry.waits } : {}),
        ...(omitidas ? { omitidas } : {}),
      },
      retry.unavailable
        ? 'message handler found a dependency unavailable; will retry (attempt not counted)'
        : 'message handler failed; will retry',
    );
  // A dependency away (the database down) meets every message: one line per 10 s and queue, with the count.
  if (retry.unavailable) deps.repeated(`${context.queue} unavailable`, write);
  else write();
}

/**
 * Publishes the message's copy to the delay queue of its step; true once the broker confirmed it.
 * False after a pause if the delay queue could not take it: the original then goes back to its
 * queue, so a failing dependency is not hammered; the attempt is not counted, which the delivery
 * limit of quorum queues bounds.
 */
async function scheduleRetry(
  deps: SettleDeps,
  consumer: Consumer,
  message: ConsumeMessage,
  retry: Extract<Outcome, { kind: 'retry' }>,
): Promise<boolean> {
  try {
    const route = retryRoute(retry.delay.stepMs, consumer.options.retryQueue ?? consumer.queue);
    await deps.publish(route.exchange, route.routingKey, message.content, {
      ...retryProperties(message),
      expiration: String(retry.delay.expirationMs),
      headers: {
        ...retryHeaders(message),
        [ATTEMPT_HEADER]: retry.unavailable ? retry.attempt : retry.attempt + 1,
        [WAITS_HEADER]: retry.waits,
        ...route.headers,
      },
    });
  } catch (error) {
    deps.logger.warn({ err: error, queue: consumer.queue }, 'could not schedule the retry; requeueing after a pause');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return false;
  }
  return true;
}

function waitsOf(message: Pick<ConsumeMessage, 'properties'>): number {
  const waits = Number(message.properties.headers?.[WAITS_HEADER]);
  return Number.isInteger(waits) && waits > 0 ? waits : 0;
}

/** 1 for a first delivery; the header counts the attempts made through the delay queues. */
function attemptOf(message: Pick<ConsumeMessage, 'properties'>): number {
  const attempt = Number(message.properties.headers?.[ATTEMPT_HEADER]);
  return Number.isInteger(attempt) && attempt > 1 ? attempt : 1;
}

/**
 * The original's headers without the dead-lettering history: RabbitMQ reads x-death to detect
 * dead-letter cycles and would drop a message that went round the same delay queue twice.
 */
export function retryHeaders(message: Pick<ConsumeMessage, 'properties'>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(message.properties.headers ?? {}).filter(
      ([key]) => !/^x-(death|first-death-|last-death-|delivery-count)/.test(key),
    ),
  );
}

/** The original's properties that describe the message (not its delivery): kept on a retry. */
const RETRY_PROPERTIES = [
  'contentType',
  'contentEncoding',
  'deliveryMode',
  'priority',
  'correlationId',
  'replyTo',
  'messageId',
  'timestamp',
  'type',
  'appId',
] as const;

/** The original's properties that describe the message (not its delivery), set ones only. */
export function retryProperties(message: Pick<ConsumeMessage, 'properties'>): Options.Publish {
  const properties = message.properties as Record<(typeof RETRY_PROPERTIES)[number], unknown>;
  return Object.fromEntries(
    RETRY_PROPERTIES.flatMap((key) => (properties[key] === undefined ? [] : [[key, properties[key]]])),
  ) as Options.Publish;
}
