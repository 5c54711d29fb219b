import type { Logger } from '@hub/log';
import pg from 'pg';
import { CONEXAO } from './pool';

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/** Told of a notification on its channel (`payload` as sent), or of a gap (`payload` undefined). */
export type NotificationHandler = (payload?: string) => void;

/**
 * One dedicated connection that LISTENs on every channel a handler was registered for (one per
 * process: the outbox relay and hub-api's caches share it).
 *
 * It survives the database: an error on the connection is logged (never an unhandled 'error'
 * event), and when the connection ends it reconnects with backoff and LISTENs again. Notifications
 * sent while it was away are lost, so after each reconnection every handler is called once with no
 * payload ("you may have missed something"): the relay looks for rows, caches drop everything.
 */
export class NotificationListener {
  private client?: pg.Client;
  private listened = new Set<string>();
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private stopped = false;
  private started = false;
  private attempt = 0;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
    /** Names the connection in logs and in pg_stat_activity.application_name. */
    private readonly name = 'listener',
  ) {}

  /** Whether the connection is up (notifications arrive). */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /** The PostgreSQL backend of the connection, while it is up (pg_stat_activity.pid). */
  get backendPid(): number | undefined {
    return (this.client as (pg.Client & { processID?: number }) | undefined)?.processID;
  }

  /** Calls `handler` for each notification on `channel` and after each reconnection; gives the way to stop. */
  on(channel: string, handler: NotificationHandler): () => void {
    if (!CHANNEL.test(channel)) throw new Error(`"${channel}" is not a plain lower-case channel name`);
    const set = this.handlers.get(channel) ?? new Set();
    set.add(handler);
    this.handlers.set(channel, set);
    const client = this.client;
    if (client && !this.listened.has(channel)) {
      this.listened.add(channel);
      // A failure here means the connection is going away: 'end' follows and the reconnection LISTENs.
      client
        .query(`listen "${channel}"`)
        .catch((error) => this.logger.warn({ err: error, channel }, `${this.name}: LISTEN failed`));
    }
    return () => {
      set.delete(handler);
    };
  }

  /** Connects; when it cannot, keeps trying in the background (the caller goes on without notifications). */
  async start(): Promise<this> {
    if (this.started) return this;
    this.started = true;
    try {
      await this.connect();
    } catch (error) {
      this.logger.warn({ err: error }, `${this.name}: cannot LISTEN; retrying`);
      this.scheduleReconnect();
    }
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private notify(channel: string, payload?: string): void {
    for (const handler of this.handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        this.logger.error({ err: error, channel }, `${this.name}: a notification handler failed`);
      }
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: this.name,
      // A peer that vanished without a FIN (a primary's host lost in a failover, a dropped NAT entry)
      // is noticed within about a minute by TCP keep-alive from 10 s idle (the system's default waits
      // two hours before its first probe: an idle LISTEN connection to a vanished primary would miss
      // every notification of the new one for that long), and a connection attempt that gets no
      // answer gives up after 10 s and is retried.
      ...CONEXAO,
    });
    client.on('error', (error) => this.logger.warn({ err: error }, `${this.name}: LISTEN connection error`));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => this.notify(message.channel, message.payload));
    const listened = new Set<string>();
    try {
      await client.connect();
      // Channels registered while this ran are LISTENed too before the client is handed over.
      for (;;) {
        const pending = [...this.handlers.keys()].filter((channel) => !listened.has(channel));
        if (pending.length === 0) break;
        for (const channel of pending) {
          await client.query(`listen "${channel}"`);
          listened.add(channel);
        }
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.listened = listened;
    this.attempt = 0;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.stopped) return;
    this.logger.warn(`${this.name}: LISTEN connection lost; reconnecting`);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    this.attempt += 1;
    const delay = Math.min(5_000, 250 * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.retry = setTimeout(() => {
      this.connect().then(
        () => {
          if (this.stopped) return;
          this.logger.info(`${this.name}: listening again`);
          for (const channel of this.handlers.keys()) this.notify(channel);
        },
        (error) => {
          this.logger.warn({ err: error, attempt: this.attempt }, `${this.name}: LISTEN reconnection failed`);
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.retry.unref();
  }
}
