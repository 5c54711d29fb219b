import type { Logger } from '@hub/log';
import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { ChannelAcks } from './acks';
import type { ConsumeOptions, Topology } from './broker';

/** A consumer started by `Broker.consume`. */
export interface Consumption {
  /**
   * Stops it for good: no more messages (also after a reconnection), its handlers under way end
   * (acked or nacked on its channel), then its channel closes. Messages it had not taken stay in
   * the queue for other consumers.
   */
  cancel(): Promise<void>;
}

export type MessageHandler = (message: ConsumeMessage) => Promise<void>;

export interface Consumer {
  queue: string;
  handler: MessageHandler;
  options: ConsumeOptions;
  /** The library's channel for it, whose setup (which consumes) runs again on every connection. */
  wrapper?: ChannelWrapper;
  /** The amqplib channel it consumes on now: its messages are acked there, never on a later one. */
  channel?: Channel;
  tag?: string;
  /** Its handlers under way. */
  inFlight: Set<Promise<void>>;
  cancelled?: boolean;
  /** A chain of restarts is under way for it: never two racing to consume. */
  restarting?: boolean;
}

/** What the consumers need from the broker that holds them. */
export interface ConsumerHost {
  readonly manager: AmqpConnectionManager;
  readonly logger: Logger;
  isClosed(): boolean;
  /** Resolves once the topology is declared on that connection (once per connection). */
  declaredOn(connection: ChannelModel): Promise<void>;
  /** Declares every topology again, on the live connection. */
  redeclare(): Promise<void>;
  onChannel<T>(connection: ChannelModel, fn: (channel: Channel) => Promise<T>): Promise<T>;
  /** The delay queues of the consumer's retry policy. */
  retrySteps(consumer: Consumer): Topology;
  /** Runs the handler, then acks, nacks or schedules the retry on that channel. */
  handle(channel: Channel, consumer: Consumer, message: ConsumeMessage, acks?: ChannelAcks): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * The consumers of a broker, each on a channel wrapper of amqp-connection-manager: the library
 * opens its channel on every connection and runs its setup, which declares (waiting for the
 * topology of that connection) and consumes, so a reconnection restarts every consumer. What the
 * library leaves out is kept here: a message is acked on the channel it came from (the wrapper's
 * ack goes to its current channel, which after a reconnection is another one), and a consumer
 * whose channel closed alone while the connection stays up (its queue deleted, cancelled by the
 * broker) starts again by itself with a backoff, the others untouched.
 */
export class Consumers {
  private readonly all: Consumer[] = [];
  /** Every handler under way. */
  readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly host: ConsumerHost) {}

  /** The connection went: no channel to ack on until the library sets each consumer up again. */
  lost(): void {
    for (const consumer of this.all) {
      consumer.channel = undefined;
      consumer.tag = undefined;
    }
  }

  /** Stops every consumer taking messages and waits for the handlers under way (the broker closing). */
  async stop(): Promise<void> {
    for (const consumer of this.all) {
      if (consumer.channel && consumer.tag) await consumer.channel.cancel(consumer.tag).catch(() => undefined);
    }
    await Promise.allSettled([...this.inFlight]);
  }

  /** Consumes a queue (at once when `connected`, else with the next connection); acks after the handler. */
  async add(queue: string, handler: MessageHandler, options: ConsumeOptions, connected: boolean): Promise<Consumption> {
    const consumer: Consumer = { queue, handler, options, inFlight: new Set() };
    this.all.push(consumer);
    const consumption = { cancel: () => this.cancel(consumer) };
    if (!connected) {
      // Started once connected, as on every connection.
      this.open(consumer).catch((error) => this.failed(consumer, error));
      return consumption;
    }
    try {
      await this.open(consumer);
    } catch (error) {
      // Not started (e.g. the queue does not exist): nothing is left behind to restart it.
      await consumption.cancel();
      throw error;
    }
    return consumption;
  }

  private async cancel(consumer: Consumer): Promise<void> {
    if (consumer.cancelled) return;
    consumer.cancelled = true;
    const i = this.all.indexOf(consumer);
    if (i >= 0) this.all.splice(i, 1);
    const { channel, tag, wrapper } = consumer;
    if (channel && tag) await channel.cancel(tag).catch(() => undefined);
    await Promise.allSettled([...consumer.inFlight]);
    consumer.channel = undefined;
    consumer.tag = undefined;
    consumer.wrapper = undefined;
    await wrapper?.close().catch(() => undefined);
  }

  /**
   * Opens the consumer's channel through the library, whose setup consumes: on this connection and
   * again on every later one. Resolves once it consumes; rejects (its channel closed) when its first
   * setup failed.
   */
  private open(consumer: Consumer): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let first = true;
      const wrapper: ChannelWrapper = this.host.manager.createChannel({
        name: consumer.queue,
        confirm: false,
        setup: async (channel: Channel) => {
          const opening = first;
          first = false;
          try {
            await this.start(consumer, wrapper, channel);
            if (opening) resolve();
          } catch (error) {
            if (consumer.wrapper === wrapper) consumer.wrapper = undefined;
            void wrapper.close().catch(() => undefined);
            if (consumer.cancelled) resolve();
            else if (opening) reject(error);
            else this.failed(consumer, error);
          }
        },
      });
      wrapper.on('error', (error) =>
        this.host.logger.warn({ err: error, queue: consumer.queue }, 'amqp consumer channel error'),
      );
      // Closed (the broker closing, the consumer cancelled) before its setup ran: settled all the same.
      wrapper.once('close', () => {
        if (!first) return;
        if (consumer.cancelled || this.host.isClosed()) resolve();
        else reject(new Error('consumer channel closed before it consumed'));
      });
      consumer.wrapper = wrapper;
    });
  }

  private async start(consumer: Consumer, wrapper: ChannelWrapper, channel: Channel): Promise<void> {
    const connection = this.host.manager.connection;
    if (!connection) throw new Error('RabbitMQ connection lost');
    channel.on('error', (error) =>
      this.host.logger.warn({ err: error, queue: consumer.queue }, 'amqp consumer channel error'),
    );
    channel.on('close', () => setImmediate(() => this.channelClosed(consumer, wrapper, channel)));
    if (consumer.cancelled) throw new Error('consumer cancelled');
    await this.host.declaredOn(connection);
    await channel.prefetch(consumer.options.prefetch ?? 10);
    await this.host.onChannel(connection, this.host.retrySteps(consumer));
    const acks = consumer.options.batchAcks ? new ChannelAcks(channel) : undefined;
    const reply = await channel.consume(consumer.queue, (message) => this.deliver(consumer, channel, message, acks));
    consumer.channel = channel;
    consumer.tag = reply.consumerTag;
    // Cancelled while it was starting: undone now that it has a tag.
    if (consumer.cancelled) await channel.cancel(reply.consumerTag).catch(() => undefined);
  }

  private deliver(consumer: Consumer, channel: Channel, message: ConsumeMessage | null, acks?: ChannelAcks): void {
    if (!message) {
      this.host.logger.warn({ queue: consumer.queue }, 'the broker cancelled the consumer');
      channel.close().catch(() => undefined);
      return;
    }
    acks?.opened(message);
    const work = this.host
      .handle(channel, consumer, message, acks)
      .catch((error) =>
        this.host.logger.error(
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
  }

  /**
   * A consumer channel closed alone (queue deleted, consumer cancelled, consumer timeout) is not
   * opened again by the library while the connection stays up: that consumer starts again by itself.
   * When the whole connection went, the library runs its setup again on the next one instead.
   */
  private channelClosed(consumer: Consumer, wrapper: ChannelWrapper, channel: Channel): void {
    if (this.host.isClosed() || consumer.cancelled || consumer.wrapper !== wrapper || consumer.channel !== channel)
      return;
    consumer.channel = undefined;
    consumer.tag = undefined;
    consumer.wrapper = undefined;
    void wrapper.close().catch(() => undefined);
    void this.restart(consumer);
  }

  /** Its setup failed on a connection (its queue gone): that consumer alone retries; the others stay up. */
  private failed(consumer: Consumer, error: unknown): void {
    if (this.host.isClosed() || consumer.cancelled) return;
    this.host.logger.warn(
      { err: error, queue: consumer.queue },
      (error as { code?: number }).code === 404
        ? 'queue to consume not found; retrying it alone'
        : 'could not start the consumer; retrying it alone',
    );
    void this.restart(consumer);
  }

  private async restart(consumer: Consumer): Promise<void> {
    if (consumer.restarting) return;
    consumer.restarting = true;
    try {
      for (let attempt = 1; ; attempt += 1) {
        await sleep(Math.min(30_000, 250 * 2 ** attempt));
        if (this.host.isClosed() || consumer.cancelled || consumer.wrapper) return;
        try {
          // The queue may have been deleted: declare the topology again before consuming.
          await this.host.redeclare();
          await this.open(consumer);
          this.host.logger.info({ queue: consumer.queue }, 'consumer restarted');
          return;
        } catch (error) {
          if (this.host.isClosed() || consumer.cancelled) return;
          this.host.logger.warn(
            { err: error, queue: consumer.queue, attempt },
            'could not restart the consumer; retrying',
          );
        }
      }
    } finally {
      consumer.restarting = false;
    }
  }
}
