import type { Channel, ConsumeMessage } from 'amqplib';

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
