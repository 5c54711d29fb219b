import type { GetMessage } from 'amqplib';
import type { Logger } from '@hub/log';
import type { Broker } from './broker';
import { retryHeaders, retryProperties } from './settle';
import { declareRetryLadder, RETRY_EXCHANGE, retryRoute } from './ladder';

/**
 * A retry ladder of an earlier version: one exchange routing to one queue per step, whose messages
 * the migration moves into the one ladder (./ladder.ts) before it removes them.
 */
export interface OldLadder {
  exchange: string;
  queueName: (stepMs: number) => string;
  /** The queue a message of it goes back to once its wait is over. */
  backTo: (message: GetMessage) => string;
}

/**
 * The consumers' ladders before `hub.atraso` (headers exchanges, each message's routing key the name
 * of its queue): `.v3` (quorum, at-most-once dead-lettering), `.v2` (quorum, at-least-once) and the
 * first one (classic queues).
 */
export const OLD_CONSUMER_LADDERS: readonly OldLadder[] = [
  'hub.novas-tentativas.v3',
  'hub.novas-tentativas.v2',
  'hub.novas-tentativas',
].map((exchange) => ({
  exchange,
  queueName: (stepMs: number) => `${exchange}.${stepMs}ms`,
  backTo: (message: GetMessage) => message.fields.routingKey,
}));

const code = (error: unknown) => (error as { code?: number }).code;

/**
 * An exclusive queue as the lock of the migration: one process of the virtual host migrates at a
 * time (RabbitMQ refuses a second connection's declaration, 405), and the lock goes with the
 * connection of a process that dies midway. Quorum queues refuse `queue.delete` with if-empty, so
 * a queue emptied by one process must not be deleted under another still moving its messages.
 */
const LOCK_QUEUE = `${RETRY_EXCHANGE}.migracao`;

/**
 * Moves what waits in the old ladders' queues of the steps given into the one ladder, then deletes
 * those queues and the old exchanges; run at start-up by hub-api and the delivery worker. Idempotent;
 * when several processes find old queues at once, one moves them (LOCK_QUEUE) and the others go on
 * starting. The exchanges go first: an old process still running then fails its publish there,
 * retries it after re-declaring its topology, and the next start moves that too. Each message is
 * published (confirmed, mandatory) to its step of the new ladder before it is acked, so a crash
 * repeats a message at worst; one whose queue no longer exists is dropped, as its old ladder would
 * have dropped it. A message keeps its own expiration: it waits its step again, at most one step
 * late. Queues of steps no process names are not found (AMQP cannot list queues): `rabbitmqctl
 * list_queues` shows them, and they empty themselves through their TTL. Resolves with the number of
 * messages moved (0 when another process holds the lock).
 */
export async function migrateOldLadders(
  broker: Broker,
  ladders: readonly { ladder: OldLadder; stepsMs: readonly number[] }[],
  logger: Logger,
): Promise<number> {
  await broker.withChannel(async (channel) => {
    for (const { ladder } of ladders) await channel.deleteExchange(ladder.exchange);
  });
  const byName = new Map(
    ladders.flatMap(({ ladder, stepsMs }) =>
      stepsMs.map((stepMs) => [ladder.queueName(stepMs), { ladder, stepMs }] as const),
    ),
  );
  const candidates = [...byName.values()];
  // Asked all at once (at every start, and nearly always not found): one round trip, not one per queue.
  const found = (
    await Promise.all(candidates.map(async (c) => ((await exists(broker, c.ladder.queueName(c.stepMs))) ? [c] : [])))
  ).flat();
  if (found.length === 0) return 0;
  const locked = await broker
    .withChannel((channel) => channel.assertQueue(LOCK_QUEUE, { exclusive: true, durable: false }))
    .then(
      () => true,
      (error: unknown) => {
        if (code(error) === 405) return false;
        throw error;
      },
    );
  if (!locked) {
    logger.info('another process migrates the old retry ladders');
    return 0;
  }
  try {
    let moved = 0;
    for (const { ladder, stepMs } of found) moved += await drainOldQueue(broker, ladder, stepMs, logger);
    return moved;
  } finally {
    await broker.withChannel((channel) => channel.deleteQueue(LOCK_QUEUE)).catch(() => undefined);
  }
}

/** On the channel kept for that name: a queue that is not there closes that one only, quietly. */
async function exists(broker: Broker, queue: string): Promise<boolean> {
  try {
    await broker.checkQueue(queue);
    return true;
  } catch (error) {
    if (code(error) === 404) return false;
    throw error;
  } finally {
    broker.forgetQueue(queue);
  }
}

async function drainOldQueue(broker: Broker, ladder: OldLadder, stepMs: number, logger: Logger): Promise<number> {
  const queue = ladder.queueName(stepMs);
  // Another process may have moved it while this one waited for the lock.
  if (!(await exists(broker, queue))) return 0;
  await broker.withChannel((channel) => declareRetryLadder(channel, [stepMs]));
  const known = new Map<string, Promise<boolean>>();
  const backToExists = (name: string) => {
    if (!known.has(name)) known.set(name, exists(broker, name));
    return known.get(name)!;
  };
  const moved = await broker.withChannel(async (channel) => {
    let count = 0;
    for (let message = await channel.get(queue); message; message = await channel.get(queue)) {
      const route = retryRoute(stepMs, ladder.backTo(message));
      // Its queue deleted while it waited (a destination's, a test's): it was going nowhere, and in
      // the ladder RabbitMQ would keep trying to dead-letter it there (at-least-once).
      if (!(await backToExists(route.routingKey))) {
        logger.warn({ queue, backTo: route.routingKey }, 'old retry whose queue no longer exists: dropped');
        channel.ack(message);
        continue;
      }
      await broker.publish(route.exchange, route.routingKey, message.content, {
        ...retryProperties(message),
        ...(message.properties.expiration === undefined ? {} : { expiration: message.properties.expiration }),
        headers: { ...retryHeaders(message), ...route.headers },
        mandatory: true,
      });
      channel.ack(message);
      count += 1;
    }
    return count;
  });
  await broker.withChannel((channel) => channel.deleteQueue(queue));
  logger.info({ queue, moved }, 'old retry queue drained into the retry ladder and deleted');
  return moved;
}
