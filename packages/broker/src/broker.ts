import { EventEmitter } from 'node:events';
import { createRepeatLimiter, type Logger } from '@hub/log';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import type { Channel, ChannelModel, ConfirmChannel, Options, Replies } from 'amqplib';
import { brokerUrls, type ConnectionSettings, connectionManager, where } from './connection';
import { type Consumer, type Consumption, Consumers, type MessageHandler } from './consumers';
import type { RetryPolicy } from './failure';
import { DEFAULT_RETRY_DELAYS_MS, declareRetryLadder } from './ladder';
import { Publisher } from './publisher';
import { type SettleDeps, settle } from './settle';

export { ChannelAcks } from './acks';
export { brokerUrls } from './connection';
export type { Consumption, MessageHandler } from './consumers';
export { ATTEMPT_HEADER, RequeueMessage, retryHeaders, retryProperties, WAITS_HEADER } from './settle';

/** Declares exchanges, queues and bindings; runs on every (re)connection, so it must be idempotent. */
export type Topology = (channel: Channel) => Promise<void>;

/**
 * Set on a `mandatory` publish: a number unique to this connection's publisher, so a basic.return
 * is matched to its publish (RabbitMQ sends the return before the confirm of the same message).
 */
export const PUBLISH_ID_HEADER = 'hub-envio';

/** A `mandatory` message no queue was bound to take: RabbitMQ returned it instead of storing it. */
export class UnroutableError extends Error {
  override name = 'UnroutableError';
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

export interface BrokerOptions extends ConnectionSettings {
  /** Give up the first connection after this long; reconnections retry forever. */
  connectTimeoutMs?: number;
  /** How long a publish waits for a lost connection to come back, or for its confirm, before it fails. */
  publishWaitMs?: number;
}

/** A promise resolved once, and a new one for the next time. */
function signal(): { fired: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const fired = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { fired, fire };
}

/**
 * One AMQP connection per process that heals itself, kept by amqp-connection-manager (see
 * connection.ts for the URL list and the backoff). Its channel wrappers are opened again on every
 * connection, and their setups re-declare the topology and restart every consumer. What the
 * library leaves out is kept here (docs/decisions/broker-on-amqp-connection-manager.md): a publish
 * is refused while the broker is down instead of queued, a message is acked on the channel it came
 * from, and a channel closed alone (a publish to a missing exchange, a consumed queue deleted) is
 * recovered. Publishing goes through a confirm channel and resolves only when the broker has taken
 * the message. Every connection and channel has an 'error' listener: a broker hiccup is logged,
 * never a crash.
 */
export class Broker extends EventEmitter {
  private readonly manager: AmqpConnectionManager;
  private readonly interrupt: () => void;
  private readonly lastError: () => Error | undefined;
  /** The confirm channel publishes go through, opened with the first connection attempt. */
  private readonly publisher: Publisher;
  /** The topology is declared on the current connection and the publisher is open. */
  private up = false;
  private upSignal = signal();
  private node = 'unknown';
  private readonly topologies: Topology[] = [];
  private readonly consumers: Consumers;
  /** The topology's declaration on one connection, shared by every channel set up on it. */
  private declared?: { connection: ChannelModel; done: Promise<void> };
  private closed = false;
  private setupFailures = 0;
  /** Channels kept for checkQueue, one per queue name: a 404 closes only that queue's own. */
  private readonly inspectors = new Map<string, Promise<Channel>>();
  /** Warnings that every message repeats while a dependency is away, written once per 10 s. */
  private readonly repeated = createRepeatLimiter();

  /** `url`: one AMQP URL, a comma-separated list of a cluster's nodes, or that list as an array. */
  constructor(
    url: string | readonly string[],
    private readonly logger: Logger,
    private readonly options: BrokerOptions,
  ) {
    super();
    const kept = connectionManager(brokerUrls(url), logger, options);
    this.manager = kept.manager;
    this.interrupt = kept.interrupt;
    this.lastError = kept.lastError;
    this.publisher = new Publisher(this.manager, logger, PUBLISH_ID_HEADER);
    this.on('error', () => undefined);
    const settling: SettleDeps = {
      logger,
      repeated: this.repeated,
      publish: (exchange, routingKey, content, publish) => this.publish(exchange, routingKey, content, publish),
    };
    this.consumers = new Consumers({
      manager: this.manager,
      logger,
      isClosed: () => this.closed,
      declaredOn: (connection) => this.declaredOn(connection),
      redeclare: async () => {
        for (const topology of this.topologies) await this.withChannel(topology);
      },
      onChannel: (connection, fn) => this.onChannel(connection, fn),
      retrySteps: (consumer) => this.declareRetrySteps(consumer),
      handle: (channel, consumer, message, acks) => settle(settling, channel, consumer, message, acks),
    });
    this.manager.on('connect', ({ url: at }) => {
      this.node = where(at);
      // The library's type names the inner connection; what it holds is the amqplib ChannelModel.
      const connection = this.manager.connection;
      connection?.on('error', (error) => this.logger.warn({ err: error }, 'amqp connection error'));
      connection?.on('handler-error', (error) => this.logger.error({ err: error }, 'amqp event handler failed'));
    });
    this.manager.on('disconnect', ({ err }) => this.onConnectionLost(err));
  }

  /** The live amqplib connection (the tests cut it, as a network failure would). */
  private get connection(): ChannelModel | undefined {
    return this.manager.connection;
  }

  get connected(): boolean {
    return this.up;
  }

  /** A readiness check: resolves while connected, rejects while the connection is down. */
  readonly ready = async (): Promise<void> => {
    if (!this.connected) throw new Error('disconnected');
  };

  /** Connects (retrying until connectTimeoutMs) and declares the topology. */
  async start(): Promise<this> {
    try {
      await this.whenConnected(this.options.connectTimeoutMs ?? 30_000);
    } catch (error) {
      // Given up: no attempt goes on behind the caller's back.
      await this.close();
      throw new Error(`cannot reach RabbitMQ: ${(this.lastError() ?? (error as Error)).message}`);
    }
    return this;
  }

  /** Adds a topology; applied now when connected and on every later connection. */
  async declare(topology: Topology): Promise<void> {
    this.topologies.push(topology);
    if (this.connection) await this.withChannel(topology);
  }

  /** Runs fn on a short-lived channel (declarations, inspections in tests and operations). */
  async withChannel<T>(fn: (channel: Channel) => Promise<T>): Promise<T> {
    return this.onChannel(await this.liveConnection(), fn);
  }

  /**
   * A queue's depth and consumers as RabbitMQ counts them now. The check runs on a channel kept for
   * that queue (one round trip instead of opening and closing a channel: operators' screens and
   * metrics ask often, the worker every few seconds); it rejects with code 404 when the queue does
   * not exist, which closes that channel only, and the next check opens another.
   */
  async checkQueue(queue: string): Promise<Replies.AssertQueue> {
    const connection = await this.liveConnection();
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
    const waitMs = this.options.publishWaitMs ?? 10_000;
    await this.whenConnected(waitMs);
    const { returned } = await this.publisher.send(exchange, routingKey, content, options, waitMs);
    if (returned)
      throw new UnroutableError(`no queue takes messages of exchange "${exchange}" with key "${routingKey}"`);
  }

  /** Consumes a queue; a message is acked only after its handler resolved. */
  consume(queue: string, handler: MessageHandler, options: ConsumeOptions = {}): Promise<Consumption> {
    return this.consumers.add(queue, handler, options, this.up);
  }

  /** Stops consuming, waits for handlers under way, then closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.consumers.stop();
    this.up = false;
    this.inspectors.clear();
    this.interrupt();
    await this.manager.close().catch(() => undefined);
  }

  /** The current connection once the topology is declared on it, waiting for it as a publish does. */
  private async liveConnection(): Promise<ChannelModel> {
    await this.whenConnected(10_000);
    const connection = this.connection;
    if (!connection) throw new Error('RabbitMQ connection lost');
    return connection;
  }

  /**
   * Resolves once connected (the first call starts the library's connection attempts). Callers share
   * them, but each waits at most `waitMs`: a publish during an outage fails after that instead of
   * hanging, and is never queued for later.
   */
  private async whenConnected(waitMs: number): Promise<void> {
    if (this.up) return;
    if (this.closed) throw new Error('broker connection is closed');
    if (!this.publisher.opened) {
      this.publisher.open((channel) => this.setUpPublisher(channel));
      this.manager.connect().catch(() => undefined);
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`RabbitMQ is not reachable (waited ${waitMs} ms)`)), waitMs);
    });
    await Promise.race([this.upSignal.fired, timeout]).finally(() => clearTimeout(timer));
  }

  /** Run by the library on every connection: the topology first, then the broker is up. */
  private async setUpPublisher(channel: ConfirmChannel): Promise<void> {
    const connection = this.connection;
    if (this.closed || !connection) return;
    // A channel the broker closed alone (a publish to a missing exchange) is not opened again by the
    // library until the connection is: the connection is closed, so everything is rebuilt in one place.
    channel.on('close', () => {
      this.markDown();
      setImmediate(() => {
        if (!this.closed && this.connection === connection) connection.close().catch(() => undefined);
      });
    });
    try {
      await this.declaredOn(connection);
    } catch (error) {
      // As a failed connection: closed after a backoff, and the library connects again (to the next node).
      this.setupFailures += 1;
      const delay = Math.min(this.options.maxBackoffMs ?? 10_000, 100 * 2 ** this.setupFailures);
      this.logger.warn({ err: error, retry_in_ms: delay }, 'could not declare the topology; reconnecting');
      setTimeout(() => {
        if (this.connection === connection) connection.close().catch(() => undefined);
      }, delay).unref();
      return;
    }
    if (this.closed || this.connection !== connection) return;
    this.setupFailures = 0;
    this.up = true;
    this.upSignal.fire();
    this.logger.info({ node: this.node }, 'connected to RabbitMQ');
    this.emit('connected');
  }

  /** The topology declared once per connection (each part on a channel of its own); every setup waits for it. */
  private declaredOn(connection: ChannelModel): Promise<void> {
    if (this.declared?.connection !== connection) {
      const declare = async () => {
        for (const topology of this.topologies) await this.onChannel(connection, topology);
      };
      this.declared = { connection, done: declare() };
    }
    return this.declared.done;
  }

  private markDown(): void {
    if (!this.up) return;
    this.up = false;
    this.upSignal = signal();
  }

  private onConnectionLost(error: unknown): void {
    this.markDown();
    this.inspectors.clear();
    this.consumers.lost();
    if (this.closed) return;
    this.logger.warn({ err: error }, 'lost RabbitMQ; reconnecting');
    this.emit('disconnected');
  }

  /** The ladder's exchange and the queue of every step of the consumer's policy. Idempotent. */
  private declareRetrySteps(consumer: Consumer): Topology {
    return (channel) => declareRetryLadder(channel, consumer.options.retry?.delaysMs ?? DEFAULT_RETRY_DELAYS_MS);
  }
}
