import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { createRepeatLimiter, type Logger } from '@hub/log';
import amqp, {
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
  type Options,
  type Replies,
} from 'amqplib';
import { classifyFailure, type RetryPolicy, retryDelay } from './failure';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY_DELAYS_MS, declareRetryLadder, retryRoute } from './ladder';

/** Declares exchanges, queues and bindings; runs on every (re)connection, so it must be idempotent. */
export type Topology = (channel: Channel) => Promise<void>;

/** The attempt a delivery is (absent on the first); on a dead-lettered message, the attempt that failed last. */
export const ATTEMPT_HEADER = 'hub-tentativa';
/** How many times in a row the message waited for an unavailable dependency (not counted as attempts). */
export const WAITS_HEADER = 'hub-esperas';
/**
 * Set on a `mandatory` publish: a number unique to this connection's publisher, so a basic.return
 * is matched to its publish (RabbitMQ sends the return before the confirm of the same message).
 */
export const PUBLISH_ID_HEADER = 'hub-envio';

/** A `mandatory` message no queue was bound to take: RabbitMQ returned it instead of storing it. */
export class UnroutableError extends Error {
  override name = 'UnroutableError';
}

/**
 * Thrown by a handler that did not handle its message and wants it back in the queue as it is, at
 * once (a consumer stopping): nacked with requeue, not retried through the delay queues.
 */
export class RequeueMessage extends Error {
  override name = 'RequeueMessage';
}

export interface ConsumeOptions {
  prefetch?: number;
  /**
   * 'reject' makes every failure final (dead-lettered at once); 'requeue', the default, classifies
   * failures: final ones are dead-lettered, the others retried with backoff up to `retry.maxAttempts`.
   */
  onFailure?: 'requeue' | 'reject';
  /** Failures the consumer knows can never succeed (e.g. data the database refuses): dead-lettered at once. */
  isFinal?: (error: unknown) => boolean;
  /**
   * Failures that say a dependency is down (the database restarting), not that the message is bad:
   * the message waits in the delay queues with a backoff of its own and its attempt is not counted,
   * so an outage longer than the retry policy dead-letters nothing.
   */
  isUnavailable?: (error: unknown) => boolean;
  retry?: RetryPolicy;
  /**
   * The queue a retried message comes back to (the delay queues dead-letter it there by name); the
   * consumed queue unless given. A queue that may be deleted while its messages wait (a destination's
   * own queue) sends them back to one that is always there.
   */
  retryQueue?: string;
  /**
   * Acks sent together (ChannelAcks): once per turn of the event loop, one basic.ack with
   * `multiple` for every settled message below the oldest one still being handled, the rest one
   * by one. The handler's work is acked no later, and a stop waits for the acks as before.
   */
  batchAcks?: boolean;
}

/**
 * The acks of one consumer channel, sent once per turn of the event loop: the settled messages
 * whose delivery tags are all below the oldest message still open (being handled) go in one
 * basic.ack with `multiple`, which RabbitMQ settles as one command; those above it are acked one by
 * one (holding them would hold prefetch slots behind a slow handler). A message that is nacked is
 * closed first, so no ack with `multiple` ever covers a message still open. On a closed channel
 * nothing is sent: the broker redelivers its unacknowledged messages anyway.
 */
export class ChannelAcks {
  private readonly open = new Set<number>();
  private ready: { message: ConsumeMessage; done: () => void }[] = [];
  private scheduled = false;

  constructor(private readonly channel: Channel) {}

  /** A message delivered to the handler. */
  opened(message: ConsumeMessage): void {
    this.open.add(message.fields.deliveryTag);
  }

  /** A message settled some other way (nacked): no longer open. */
  closed(message: ConsumeMessage): void {
    this.open.delete(message.fields.deliveryTag);
  }

  /** Acks the message with the next batch; resolves once the ack is written to the channel. */
  ack(message: ConsumeMessage): Promise<void> {
    this.open.delete(message.fields.deliveryTag);
    return new Promise<void>((done) => {
      this.ready.push({ message, done });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const ready = this.ready.sort((a, b) => a.message.fields.deliveryTag - b.message.fields.deliveryTag);
    this.ready = [];
    let oldestOpen = Number.POSITIVE_INFINITY;
    for (const tag of this.open) if (tag < oldestOpen) oldestOpen = tag;
    let below = 0;
    while (below < ready.length && ready[below]!.message.fields.deliveryTag < oldestOpen) below += 1;
    try {
      if (below > 0) this.channel.ack(ready[below - 1]!.message, true);
      for (let i = below; i < ready.length; i++) this.channel.ack(ready[i]!.message);
    } catch {
      // The channel closed: its unacknowledged messages go back to the queue by themselves.
    }
    for (const r of ready) r.done();
  }
}

/** A consumer started by `Broker.consume`. */
export interface Consumption {
  /**
   * Stops it for good: no more messages (also after a reconnection), its handlers under way end
   * (acked or nacked on its channel), then its channel closes. Messages it had not taken stay in
   * the queue for other consumers.
   */
  cancel(): Promise<void>;
}

/** How long one node may take to open an AMQP connection before the next is tried. */
const CONNECT_TIMEOUT_MS = 5_000;

export type MessageHandler = (message: ConsumeMessage) => Promise<void>;

interface Consumer {
  queue: string;
  handler: MessageHandler;
  options: ConsumeOptions;
  channel?: Channel;
  tag?: string;
  /** Its handlers under way. */
  inFlight: Set<Promise<void>>;
  cancelled?: boolean;
  /**
   * The connection a chain of restarts is under way for: one chain per consumer and connection,
   * never two racing to consume (a chain for an older connection ends by itself).
   */
  restarting?: ChannelModel;
}

export interface BrokerOptions {
  /** Appears in the connection name in RabbitMQ's management UI, followed by the host and the pid. */
  name: string;
  /** Give up the first connection after this long; reconnections retry forever. */
  connectTimeoutMs?: number;
  maxBackoffMs?: number;
  /** How long a publish waits for a lost connection to come back before it fails. */
  publishWaitMs?: number;
}

/**
 * The AMQP URLs of a broker setting: one URL, or the nodes of a cluster separated by commas
 * (`amqp://u:p@mq-1:5672/hub,amqp://u:p@mq-2:5672/hub`; a comma inside credentials is written %2C).
 */
export function brokerUrls(setting: string | readonly string[]): string[] {
  const urls = (typeof setting === 'string' ? setting.split(',') : [...setting]).map((u) => u.trim()).filter(Boolean);
  if (urls.length === 0) throw new Error('no RabbitMQ URL given');
  return urls;
}

/** host:port of an AMQP URL, for logs (never its credentials). */
const where = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'amqps:' ? 5671 : 5672)}`;
};

/**
 * One AMQP connection per process that heals itself: on loss it reconnects with exponential
 * backoff and jitter, re-declares the topology and restarts every consumer. Given the nodes of a
 * cluster, each attempt tries them in turn, starting after the node just lost, so a node that stops
 * costs one reconnection to another, not a wait for it. Publishing goes through a confirm channel
 * and resolves only when the broker has taken the message. Every connection and channel has an
 * 'error' listener: a broker hiccup is logged, never a crash.
 */
export class Broker extends EventEmitter {
  private connection?: ChannelModel;
  private publisher?: ConfirmChannel;
  private readonly topologies: Topology[] = [];
  private readonly consumers: Consumer[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private connecting?: Promise<void>;
  private closed = false;
  private attempt = 0;
  private publishCounter = 0;
  /** Mandatory publishes awaiting their confirm: PUBLISH_ID_HEADER → marks it returned. */
  private readonly awaitingReturn = new Map<string, () => void>();
  /** Channels kept for checkQueue, one per queue name: a 404 closes only that queue's own. */
  private readonly inspectors = new Map<string, Promise<Channel>>();
  private readonly urls: string[];
  /** The index in `urls` of the node the next connection tries first. */
  private nextUrl = 0;
  /** Warnings that every message repeats while a dependency is away, written once per 10 s. */
  private readonly repeated = createRepeatLimiter();

  /** `url`: one AMQP URL, a comma-separated list of a cluster's nodes, or that list as an array. */
  constructor(
    url: string | readonly string[],
    private readonly logger: Logger,
    private readonly options: BrokerOptions,
  ) {
    super();
    this.urls = brokerUrls(url);
    this.on('error', () => undefined);
  }

  get connected(): boolean {
    return this.publisher !== undefined;
  }

  /** A readiness check: resolves while connected, rejects while the connection is down. */
  readonly ready = async (): Promise<void> => {
    if (!this.connected) throw new Error('disconnected');
  };

  /** Connects (retrying until connectTimeoutMs) and declares the topology. */
  async start(): Promise<this> {
    await this.ensureConnected(this.options.connectTimeoutMs ?? 30_000);
    return this;
  }

  /** Adds a topology; applied now when connected and after every reconnection. */
  async declare(topology: Topology): Promise<void> {
    this.topologies.push(topology);
    if (this.connection) await this.withChannel(topology);
  }

  /** Runs fn on a short-lived channel (declarations, inspections in tests and operations). */
  async withChannel<T>(fn: (channel: Channel) => Promise<T>): Promise<T> {
    await this.ensureConnected();
    return this.onChannel(this.connection!, fn);
  }

  /**
   * A queue's depth and consumers as RabbitMQ counts them now. The check runs on a channel kept for
   * that queue (one round trip instead of opening and closing a channel: operators' screens and
   * metrics ask often, the worker every few seconds); it rejects with code 404 when the queue does
   * not exist, which closes that channel only, and the next check opens another.
   */
  async checkQueue(queue: string): Promise<Replies.AssertQueue> {
    await this.ensureConnected();
    const connection = this.connection!;
    let channel = this.inspectors.get(queue);
    if (!channel) {
      const opening = connection.createChannel().then((opened) => {
        opened.on('error', (error) => this.logger.debug({ err: error, queue }, 'amqp inspection channel closed'));
        opened.on('close', () => {
          if (this.inspectors.get(queue) === opening) this.inspectors.delete(queue);
        });
        return opened;
      });
      opening.catch(() => {
        if (this.inspectors.get(queue) === opening) this.inspectors.delete(queue);
      });
      this.inspectors.set(queue, opening);
      channel = opening;
    }
    return (await channel).checkQueue(queue);
  }

  /**
   * Closes the channel kept for checking a queue (a queue that is gone, or no longer looked at): one
   * channel per queue name otherwise stays open for the connection's life.
   */
  forgetQueue(queue: string): void {
    const channel = this.inspectors.get(queue);
    if (!channel) return;
    this.inspectors.delete(queue);
    channel.then((c) => c.close()).catch(() => undefined);
  }

  private async onChannel<T>(connection: ChannelModel, fn: (channel: Channel) => Promise<T>): Promise<T> {
    const channel = await connection.createChannel();
    channel.on('error', (error) => this.logger.warn({ err: error }, 'amqp channel error'));
    try {
      return await fn(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /**
   * Publishes and waits for the broker's confirm; rejects when the broker nacks or the link drops.
   * With `mandatory: true`, a message that no queue takes is returned by the broker and the promise
   * rejects with an UnroutableError instead of resolving on the confirm that follows the return.
   */
  async publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish = {}): Promise<void> {
    await this.ensureConnected(this.options.publishWaitMs ?? 10_000);
    const channel = this.publisher!;
    let returned = false;
    let publishId: string | undefined;
    let properties: Options.Publish = { persistent: true, contentType: 'application/json', ...options };
    if (options.mandatory) {
      this.publishCounter += 1;
      publishId = String(this.publishCounter);
      properties = { ...properties, headers: { ...options.headers, [PUBLISH_ID_HEADER]: publishId } };
      this.awaitingReturn.set(publishId, () => {
        returned = true;
      });
    }
    try {
      await new Promise<void>((resolve, reject) => {
        channel.publish(exchange, routingKey, content, properties, (error) => {
          if (error) reject(error instanceof Error ? error : new Error(`broker refused the message: ${String(error)}`));
          else if (returned)
            reject(new UnroutableError(`no queue takes messages of exchange "${exchange}" with key "${routingKey}"`));
          else resolve();
        });
      });
    } finally {
      if (publishId) this.awaitingReturn.delete(publishId);
    }
  }

  /** Consumes a queue; a message is acked only after its handler resolved. */
  async consume(queue: string, handler: MessageHandler, options: ConsumeOptions = {}): Promise<Consumption> {
    const consumer: Consumer = { queue, handler, options, inFlight: new Set() };
    this.consumers.push(consumer);
    const consumption = { cancel: () => this.cancelConsumer(consumer) };
    if (this.connection) {
      try {
        await this.startConsumer(consumer);
      } catch (error) {
        // Not started (e.g. the queue does not exist): nothing is left behind to restart it.
        await consumption.cancel();
        throw error;
      }
    }
    return consumption;
  }

  private async cancelConsumer(consumer: Consumer): Promise<void> {
    if (consumer.cancelled) return;
    consumer.cancelled = true;
    const i = this.consumers.indexOf(consumer);
    if (i >= 0) this.consumers.splice(i, 1);
    const { channel, tag } = consumer;
    if (channel && tag) await channel.cancel(tag).catch(() => undefined);
    await Promise.allSettled([...consumer.inFlight]);
    consumer.channel = undefined;
    consumer.tag = undefined;
    await channel?.close().catch(() => undefined);
  }

  /** Stops consuming, waits for handlers under way, then closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const consumer of this.consumers) {
      if (consumer.channel && consumer.tag) await consumer.channel.cancel(consumer.tag).catch(() => undefined);
    }
    await Promise.allSettled([...this.inFlight]);
    const connection = this.connection;
    this.connection = undefined;
    this.publisher = undefined;
    this.inspectors.clear();
    await connection?.close().catch(() => undefined);
  }

  /**
   * Resolves once connected. Callers share one connection attempt, but each waits at most
   * `waitMs`: a publish during an outage fails after that instead of hanging with the attempt.
   */
  private async ensureConnected(waitMs = 10_000): Promise<void> {
    if (this.publisher) return;
    if (this.closed) throw new Error('broker connection is closed');
    this.connecting ??= this.connectWithBackoff(Date.now() + waitMs).finally(() => {
      this.connecting = undefined;
    });
    if (waitMs === Number.POSITIVE_INFINITY) return this.connecting;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`RabbitMQ is not reachable (waited ${waitMs} ms)`)), waitMs);
    });
    await Promise.race([this.connecting, timeout]).finally(() => clearTimeout(timer));
  }

  private async connectWithBackoff(deadline: number): Promise<void> {
    for (;;) {
      try {
        await this.connectOnce();
        this.attempt = 0;
        return;
      } catch (error) {
        this.attempt += 1;
        const delay =
          Math.min(this.options.maxBackoffMs ?? 10_000, 100 * 2 ** this.attempt) * (0.5 + Math.random() / 2);
        if (this.closed || Date.now() + delay > deadline) {
          throw new Error(`cannot reach RabbitMQ: ${(error as Error).message}`);
        }
        this.logger.warn(
          { err: error, attempt: this.attempt, retry_in_ms: Math.round(delay) },
          'RabbitMQ unreachable; retrying',
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** One try of every node, starting at `nextUrl`; rejects with the last node's error. */
  private async connectOnce(): Promise<void> {
    let failure: unknown;
    for (let k = 0; k < this.urls.length; k += 1) {
      const i = (this.nextUrl + k) % this.urls.length;
      try {
        await this.connectTo(this.urls[i]!, i);
        return;
      } catch (error) {
        failure = error;
        if (this.urls.length > 1)
          this.logger.warn({ err: error, node: where(this.urls[i]!) }, 'RabbitMQ node unreachable; trying the next');
      }
    }
    throw failure;
  }

  private async connectTo(url: string, index: number): Promise<void> {
    // Host and pid in the name: the management UI (and a fault test) can tell one process's connection from another's.
    const connection = await amqp.connect(url, {
      clientProperties: { connection_name: `${this.options.name} ${hostname()}:${process.pid}` },
      // A node that takes the TCP connection and then says nothing must not hold the failover.
      timeout: CONNECT_TIMEOUT_MS,
    });
    connection.on('error', (error) => this.logger.warn({ err: error }, 'amqp connection error'));
    connection.on('close', () => this.onConnectionLost(connection));
    connection.on('handler-error', (error) => this.logger.error({ err: error }, 'amqp event handler failed'));
    try {
      const publisher = await connection.createConfirmChannel();
      publisher.on('error', (error) => this.logger.warn({ err: error }, 'amqp publish channel error'));
      publisher.on('return', (message: ConsumeMessage) => {
        const id = message.properties.headers?.[PUBLISH_ID_HEADER];
        if (id !== undefined) this.awaitingReturn.get(String(id))?.();
      });
      // A channel closed by the broker (e.g. a publish to a missing exchange) takes the connection
      // down with it, so everything is rebuilt in one place.
      publisher.on('close', () => this.onConnectionLost(connection));
      this.connection = connection;
      for (const topology of this.topologies) await this.onChannel(connection, topology);
      this.publisher = publisher;
      for (const consumer of this.consumers) {
        try {
          await this.startConsumer(consumer);
        } catch (error) {
          // Its queue is gone (a destination's queue deleted by another worker while this one was
          // away): that consumer alone retries, or is cancelled by its owner; the connection, and
          // every other consumer, stay up. Anything else fails the connection attempt as before.
          if ((error as { code?: number }).code !== 404) throw error;
          this.logger.warn({ err: error, queue: consumer.queue }, 'queue to consume not found; retrying it alone');
          consumer.channel = undefined;
          consumer.tag = undefined;
          void this.retryConsumer(consumer, connection, 1);
        }
      }
    } catch (error) {
      this.connection = undefined;
      this.publisher = undefined;
      await connection.close().catch(() => undefined);
      throw error;
    }
    // After a loss, the node after this one is tried first.
    this.nextUrl = (index + 1) % this.urls.length;
    this.logger.info({ node: where(url) }, 'connected to RabbitMQ');
    this.emit('connected');
  }

  private onConnectionLost(connection: ChannelModel): void {
    if (this.connection !== connection) return;
    connection.close().catch(() => undefined);
    this.connection = undefined;
    this.publisher = undefined;
    this.inspectors.clear();
    for (const consumer of this.consumers) {
      consumer.channel = undefined;
      consumer.tag = undefined;
    }
    if (this.closed) return;
    this.logger.warn('lost RabbitMQ; reconnecting');
    this.emit('disconnected');
    this.ensureConnected(Number.POSITIVE_INFINITY).catch((error) =>
      this.logger.error({ err: error }, 'reconnection stopped'),
    );
  }

  private async startConsumer(consumer: Consumer): Promise<void> {
    const connection = this.connection!;
    const channel = await connection.createChannel();
    channel.on('error', (error) =>
      this.logger.warn({ err: error, queue: consumer.queue }, 'amqp consumer channel error'),
    );
    if (consumer.cancelled) {
      await channel.close().catch(() => undefined);
      return;
    }
    // A consumer channel closed alone (queue deleted, consumer timeout) is started again; when the
    // whole connection went, the reconnection restarts every consumer instead.
    channel.on('close', () => this.restartConsumer(consumer, connection, channel));
    await channel.prefetch(consumer.options.prefetch ?? 10);
    await this.onChannel(connection, this.declareRetrySteps(consumer));
    consumer.channel = channel;
    const acks = consumer.options.batchAcks ? new ChannelAcks(channel) : undefined;
    const reply = await channel.consume(consumer.queue, (message) => {
      if (!message) {
        this.logger.warn({ queue: consumer.queue }, 'the broker cancelled the consumer');
        channel.close().catch(() => undefined);
        return;
      }
      acks?.opened(message);
      const work = this.handle(channel, consumer, message, acks).catch((error) =>
        this.logger.error(
          { err: error, queue: consumer.queue },
          'message left unacknowledged; the broker will redeliver it',
        ),
      );
      this.inFlight.add(work);
      consumer.inFlight.add(work);
      void work.finally(() => {
        this.inFlight.delete(work);
        consumer.inFlight.delete(work);
      });
    });
    consumer.tag = reply.consumerTag;
    // Cancelled while it was starting: undone now that it has a tag.
    if (consumer.cancelled) await channel.cancel(reply.consumerTag).catch(() => undefined);
  }

  private restartConsumer(consumer: Consumer, connection: ChannelModel, channel: Channel): void {
    // an old channel, restarted already, or cancelled on purpose
    if (this.closed || consumer.cancelled || consumer.channel !== channel) return;
    consumer.channel = undefined;
    consumer.tag = undefined;
    void this.retryConsumer(consumer, connection, 1);
  }

  private async retryConsumer(consumer: Consumer, connection: ChannelModel, attempt: number): Promise<void> {
    // A failed start closes its channel, whose close handler asks for a restart too: one chain only.
    if (attempt === 1) {
      if (consumer.restarting === connection) return;
      consumer.restarting = connection;
    }
    const ended = () => {
      if (consumer.restarting === connection) consumer.restarting = undefined;
    };
    await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 250 * 2 ** attempt)).unref());
    if (this.closed || consumer.cancelled || this.connection !== connection || consumer.channel) return ended();
    try {
      // The queue may have been deleted: declare the topology again before consuming.
      for (const topology of this.topologies) await this.onChannel(connection, topology);
      await this.startConsumer(consumer);
      ended();
      this.logger.info({ queue: consumer.queue }, 'consumer restarted');
    } catch (error) {
      this.logger.warn({ err: error, queue: consumer.queue, attempt }, 'could not restart the consumer; retrying');
      consumer.channel = undefined;
      consumer.tag = undefined;
      await this.retryConsumer(consumer, connection, attempt + 1);
    }
  }

  /**
   * Runs the handler, then acks. A final failure, or one that used up its attempts, is nacked without
   * requeue (to the queue's dead-letter exchange). A retryable one is published again to the delay
   * queue of its step, with its attempt in a header, and only then acked: the wait happens in
   * RabbitMQ, not in this consumer's prefetch, so the other messages of the queue keep flowing and a
   * crash during the wait loses nothing. If the channel closed meanwhile, ack and nack are impossible
   * and unnecessary: the broker redelivers every unacknowledged message of a closed channel.
   */
  private async handle(
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
    if (failure instanceof RequeueMessage) {
      acks?.closed(message);
      channel.nack(message, false, true);
      return;
    }
    const { options, queue } = consumer;
    const attempt = attemptOf(message);
    const maxAttempts = options.retry?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    const final = options.onFailure === 'reject' || classifyFailure(failure, options.isFinal) === 'final';
    const context = { err: failure, queue, attempt, redelivered: message.fields.redelivered };
    const unavailable = !final && options.isUnavailable?.(failure) === true;
    if (!unavailable && (final || attempt >= maxAttempts)) {
      this.logger.error(
        context,
        final
          ? 'message handler failed for good; dead-lettered'
          : 'message handler failed on its last attempt; dead-lettered',
      );
      acks?.closed(message);
      channel.nack(message, false, false);
      return;
    }
    // A wait for a dependency keeps the attempt and grows its own backoff; a real failure counts.
    const waits = unavailable ? waitsOf(message) + 1 : 0;
    const delay = retryDelay(unavailable ? waits + 1 : attempt + 1, options.retry?.delaysMs ?? DEFAULT_RETRY_DELAYS_MS);
    const write = (omitidas = 0) =>
      this.logger.warn(
        {
          ...context,
          retry_in_ms: delay.expirationMs,
          ...(unavailable ? { waits } : {}),
          ...(omitidas ? { omitidas } : {}),
        },
        unavailable
          ? 'message handler found a dependency unavailable; will retry (attempt not counted)'
          : 'message handler failed; will retry',
      );
    // A dependency away (the database down) meets every message: one line per 10 s and queue, with the count.
    if (unavailable) this.repeated(`${queue} unavailable`, write);
    else write();
    try {
      const route = retryRoute(delay.stepMs, options.retryQueue ?? queue);
      await this.publish(route.exchange, route.routingKey, message.content, {
        ...retryProperties(message),
        expiration: String(delay.expirationMs),
        headers: {
          ...retryHeaders(message),
          [ATTEMPT_HEADER]: unavailable ? attempt : attempt + 1,
          [WAITS_HEADER]: waits,
          ...route.headers,
        },
      });
    } catch (error) {
      // The delay queue could not take it: back to the queue after a pause, so a failing dependency
      // is not hammered; the attempt is not counted, which the delivery limit of quorum queues bounds.
      this.logger.warn({ err: error, queue }, 'could not schedule the retry; requeueing after a pause');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      acks?.closed(message);
      channel.nack(message, false, true);
      return;
    }
    acks?.closed(message);
    channel.ack(message);
  }

  /** The ladder's exchange and the queue of every step of the consumer's policy. Idempotent. */
  private declareRetrySteps(consumer: Consumer): Topology {
    return (channel) => declareRetryLadder(channel, consumer.options.retry?.delaysMs ?? DEFAULT_RETRY_DELAYS_MS);
  }
}

function waitsOf(message: ConsumeMessage): number {
  const waits = Number(message.properties.headers?.[WAITS_HEADER]);
  return Number.isInteger(waits) && waits > 0 ? waits : 0;
}

/** 1 for a first delivery; the header counts the attempts made through the delay queues. */
function attemptOf(message: ConsumeMessage): number {
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
