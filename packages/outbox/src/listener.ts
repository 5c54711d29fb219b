import type { Logger } from '@hub/log';
import pg from 'pg';

/**
 * A dedicated connection that LISTENs on one channel and calls `onNotify` for every notification.
 * When the connection drops it reconnects with backoff and calls `onNotify` once (notifications
 * sent meanwhile are lost; the relay's poll would find the rows anyway, this only saves the wait).
 */
export class NotificationListener {
  private client?: pg.Client;
  private stopped = false;
  private attempt = 0;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly databaseUrl: string,
    private readonly channel: string,
    private readonly onNotify: () => void,
    private readonly logger: Logger,
  ) {}

  get listening(): boolean {
    return this.client !== undefined;
  }

  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (error) {
      this.logger.warn({ err: error }, 'outbox: cannot LISTEN; polling until it can');
      this.scheduleReconnect();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('error', (error) => this.logger.warn({ err: error }, 'outbox: LISTEN connection error'));
    client.on('end', () => this.lost(client));
    client.on('notification', () => this.onNotify());
    try {
      await client.connect();
      await client.query(`listen "${this.channel}"`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.attempt = 0;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.stopped) return;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    this.attempt += 1;
    const delay = Math.min(30_000, 250 * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.retry = setTimeout(() => {
      this.connect().then(
        () => this.onNotify(),
        (error) => {
          this.logger.warn({ err: error, attempt: this.attempt }, 'outbox: LISTEN reconnection failed');
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.retry.unref();
  }
}
