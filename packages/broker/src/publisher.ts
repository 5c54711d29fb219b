import type { Logger } from '@hub/log';
import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { ConfirmChannel, ConsumeMessage, Options } from 'amqplib';

/**
 * The confirm channel every publish goes through: a channel wrapper of amqp-connection-manager,
 * opened again on every connection, whose setup the broker gives (it declares the topology).
 * Confirms and `mandatory` returns are matched here: RabbitMQ sends a message's basic.return before
 * its confirm, and the header `idHeader` (a number unique to this publisher) names the message.
 */
export class Publisher {
  private wrapper?: ChannelWrapper;
  private counter = 0;
  /** Mandatory publishes awaiting their confirm: their id → marks it returned. */
  private readonly awaitingReturn = new Map<string, () => void>();

  constructor(
    private readonly manager: AmqpConnectionManager,
    private readonly logger: Logger,
    private readonly idHeader: string,
  ) {}

  get opened(): boolean {
    return this.wrapper !== undefined;
  }

  /** Creates the wrapper; the library runs `setUp` on its channel now if connected and on every connection. */
  open(setUp: (channel: ConfirmChannel) => Promise<void>): void {
    this.wrapper = this.manager.createChannel({
      name: 'publish',
      setup: (channel: ConfirmChannel) => {
        channel.on('error', (error) => this.logger.warn({ err: error }, 'amqp publish channel error'));
        channel.on('return', (message: ConsumeMessage) => {
          const id = message.properties.headers?.[this.idHeader];
          if (id !== undefined) this.awaitingReturn.get(String(id))?.();
        });
        return setUp(channel);
      },
    });
    this.wrapper.on('error', (error) => this.logger.warn({ err: error }, 'amqp publish channel error'));
  }

  /**
   * Publishes and resolves on the broker's confirm, with whether the broker returned the message
   * first (`mandatory`, no queue took it); rejects when the broker nacks, the channel closes, or
   * no confirm came within `waitMs`.
   */
  async send(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: Options.Publish,
    waitMs: number,
  ): Promise<{ returned: boolean }> {
    if (!this.wrapper) throw new Error('publisher not open');
    let returned = false;
    let id: string | undefined;
    let properties: Options.Publish = { persistent: true, contentType: 'application/json', ...options };
    if (options.mandatory) {
      this.counter += 1;
      id = String(this.counter);
      properties = { ...properties, headers: { ...options.headers, [this.idHeader]: id } };
      this.awaitingReturn.set(id, () => {
        returned = true;
      });
    }
    try {
      // The library keeps a message whose connection went in its queue until the next one: the
      // timeout takes it out (never sent later), so a publish is answered within its wait.
      await this.wrapper.publish(exchange, routingKey, content, { ...properties, timeout: waitMs }).catch((error) => {
        throw error instanceof Error && error.message === 'timeout'
          ? new Error(`RabbitMQ did not confirm within ${waitMs} ms`)
          : error;
      });
      return { returned };
    } finally {
      if (id) this.awaitingReturn.delete(id);
    }
  }
}
