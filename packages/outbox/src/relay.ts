import { type Broker, UnroutableError } from '@hub/broker';
import { criarPool, NotificationListener } from '@hub/database';
import { type PeriodicJob, periodicJob } from '@hub/jobs';
import type { Logger } from '@hub/log';
import { publicando } from '@hub/tracing';
import type pg from 'pg';
import { outboxTable } from './table';

export interface OutboxRelayOptions {
  databaseUrl: string;
  /** Publishes with confirms; the relay never closes it (its owner does, after stop()). */
  broker: Broker;
  logger: Logger;
  /** Name of the outbox table; its trigger notifies on a channel of the same name. */
  table?: string;
  /** Rows claimed (and published concurrently) per transaction. */
  batchSize?: number;
  /** Batches in flight at once in this process. */
  concurrency?: number;
  /** Fallback poll when no notification arrives (lost LISTEN connection, rows left by a crash). */
  pollIntervalMs?: number;
  /** A publish not confirmed within this time counts as failed; the row is sent again later. */
  publishTimeoutMs?: number;
  /** Published rows older than this are deleted; 0 keeps them. */
  retentionMs?: number;
  purgeIntervalMs?: number;
  /** Longest pause after failed batches (5 s: the end of an outage is noticed within seconds). */
  maxBackoffMs?: number;
  /**
   * The process's LISTEN connection, when it has one for other channels too (its owner starts and
   * stops it); without it the relay opens one of its own.
   */
  listener?: NotificationListener;
  /**
   * Another route for a row, tried first (mandatory): when nothing is bound to it (RabbitMQ returns
   * the message), the row goes to its own exchange and routing key. hub-api sends the jobs of an
   * isolated destination straight to its queue this way.
   */
  rotear?: (linha: LinhaDaOutbox) => { exchange: string; routingKey: string } | undefined;
}

/** A row being published, as `rotear` sees it. */
export interface LinhaDaOutbox {
  exchange: string;
  routing_key: string;
  message_id: string;
  /** the message body as JSON text */
  body: string;
}

interface Row {
  id: string;
  exchange: string;
  routing_key: string;
  message_id: string;
  body: string;
  headers: Record<string, unknown> | null;
}

const PURGE_CHUNK = 5_000;
const PUBLISH_SLICE = 50;
const MAX_PURGE_CHUNKS = 200;

/**
 * Publishes the rows of an outbox table to RabbitMQ: at least once, in any number of processes.
 *
 * Each pass claims a batch with `FOR UPDATE SKIP LOCKED` inside a transaction, publishes every row
 * of it at once (each waiting for its broker confirm), marks the confirmed ones published and
 * commits. Two relays never hold the same row, so they never publish it twice in one pass; a relay
 * that dies mid-batch rolls back, and its rows are sent again by whoever claims them next (which
 * is why every row carries a message-id for consumers to deduplicate). Relays wake on NOTIFY from
 * the table's insert trigger and poll as a fallback.
 */
export class OutboxRelay {
  readonly stats = { publicadas: 0, falhas: 0 };
  private readonly table: string;
  private readonly pool: pg.Pool;
  private readonly listener: NotificationListener;
  private readonly ownListener: boolean;
  private stopListening?: () => void;
  private readonly workers: Promise<void>[] = [];
  private readonly waiters = new Set<() => void>();
  private generation = 0;
  private stopping = false;
  private started = false;
  private purge?: PeriodicJob<number>;
  private readonly onBrokerConnected = () => this.wake();
  private readonly o: Required<
    Omit<OutboxRelayOptions, 'databaseUrl' | 'broker' | 'logger' | 'table' | 'listener' | 'rotear'>
  >;

  constructor(private readonly options: OutboxRelayOptions) {
    this.table = outboxTable(options.table ?? 'outbox');
    this.o = {
      batchSize: options.batchSize ?? 500,
      concurrency: options.concurrency ?? 2,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      publishTimeoutMs: options.publishTimeoutMs ?? 30_000,
      retentionMs: options.retentionMs ?? 7 * 24 * 3_600_000,
      purgeIntervalMs: options.purgeIntervalMs ?? 60_000,
      maxBackoffMs: options.maxBackoffMs ?? 5_000,
    };
    this.pool = criarPool(
      { connectionString: options.databaseUrl, max: this.o.concurrency + 1 },
      options.logger,
      'outbox',
    );
    this.ownListener = !options.listener;
    this.listener = options.listener ?? new NotificationListener(options.databaseUrl, options.logger, 'outbox');
  }

  /** Starts listening, the workers and the retention purge. */
  async start(): Promise<this> {
    if (this.started) return this;
    this.started = true;
    this.options.broker.on('connected', this.onBrokerConnected);
    // A notification, or a reconnection after which notifications may have been missed: look now.
    this.stopListening = this.listener.on(this.table, () => this.wake());
    if (this.ownListener) await this.listener.start();
    for (let i = 0; i < this.o.concurrency; i += 1) this.workers.push(this.work());
    if (this.o.retentionMs > 0) {
      this.purge = periodicJob({
        name: 'outbox purge',
        logger: this.options.logger,
        everyMs: this.o.purgeIntervalMs,
        run: () => this.purgePublished(),
      }).start();
    }
    return this;
  }

  /** Stops claiming, lets the batches under way finish (published and marked), then disconnects. */
  async stop(): Promise<void> {
    this.stopping = true;
    const purgeStopped = this.purge?.stop();
    this.options.broker.off('connected', this.onBrokerConnected);
    this.wake();
    await Promise.allSettled(this.workers);
    await purgeStopped;
    this.stopListening?.();
    if (this.ownListener) await this.listener.stop();
    await this.pool.end().catch(() => undefined);
  }

  /** Something was written to the outbox: look now instead of at the next poll. */
  wake(): void {
    this.generation += 1;
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const onWake of waiting) onWake();
  }

  /** Publishes until nothing is left to claim (or `maxBatches` batches); returns rows claimed. */
  async publishPending(maxBatches = 1_000): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxBatches; i += 1) {
      const claimed = await this.publishBatch();
      total += claimed;
      if (claimed < this.o.batchSize) break;
    }
    return total;
  }

  /** Age in seconds of the oldest row not yet published (0 when none waits): the outbox's lag, for /metrics. */
  async atrasoSegundos(): Promise<number> {
    const { rows } = await this.pool.query<{ segundos: number | null }>(
      `select extract(epoch from now() - min(criado_em))::float8 as segundos from ${this.table} where publicado_em is null`,
    );
    return Math.max(0, rows[0]?.segundos ?? 0);
  }

  /** Deletes published rows older than the retention, in chunks; returns how many. */
  async purgePublished(retentionMs = this.o.retentionMs): Promise<number> {
    let total = 0;
    for (let i = 0; i < MAX_PURGE_CHUNKS; i += 1) {
      const result = await this.pool.query(
        `with velhas as (select id from ${this.table} where publicado_em < now() - make_interval(secs => $1) limit $2)
         delete from ${this.table} o using velhas where o.id = velhas.id`,
        [retentionMs / 1000, PURGE_CHUNK],
      );
      total += result.rowCount ?? 0;
      if ((result.rowCount ?? 0) < PURGE_CHUNK) break;
    }
    if (total > 0) this.options.logger.info({ apagadas: total }, 'outbox: published rows purged');
    return total;
  }

  /** One transaction: claim a batch, publish it, mark what the broker confirmed. */
  private async publishBatch(): Promise<number> {
    const client = await this.pool.connect();
    // A checked-out client has no listener of the pool's: without one, the connection dropping while
    // the batch waits for broker confirms (database restarted) is an unhandled 'error' that ends the
    // process. The query under way (or the next) fails too, so the batch rolls back and is retried.
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
      this.options.logger.warn({ err: error }, 'outbox: database connection lost during a batch');
    };
    client.on('error', onError);
    let failed = 0;
    let claimed = 0;
    try {
      await client.query('begin');
      // Rows that failed before go after fresh ones, so one poisoned row cannot hold up the rest.
      // Named: prepared once per connection (planning cost as much as the claim itself).
      const { rows } = await client.query<Row>({
        name: `${this.table}_reivindicar`,
        text: `select id, exchange, routing_key, message_id, body::text as body, headers from ${this.table}
          where publicado_em is null order by tentativas, criado_em, id limit $1 for update skip locked`,
        values: [this.o.batchSize],
      });
      claimed = rows.length;
      if (rows.length > 0) {
        const results = await Promise.allSettled(await this.publishAll(rows));
        const done: string[] = [];
        const errors: string[] = [];
        const errorIds: string[] = [];
        results.forEach((result, i) => {
          const id = rows[i]!.id;
          if (result.status === 'fulfilled') done.push(id);
          else {
            errorIds.push(id);
            errors.push(String((result.reason as Error)?.message ?? result.reason).slice(0, 500));
          }
        });
        if (done.length > 0) {
          await client.query({
            name: `${this.table}_publicadas`,
            text: `update ${this.table} set publicado_em = now() where id = any($1::uuid[])`,
            values: [done],
          });
        }
        if (errorIds.length > 0) {
          await client.query(
            `update ${this.table} t set tentativas = t.tentativas + 1, ultimo_erro = e.erro
               from unnest($1::uuid[], $2::text[]) as e(id, erro) where t.id = e.id`,
            [errorIds, errors],
          );
        }
        failed = errorIds.length;
        this.stats.publicadas += done.length;
        this.stats.falhas += failed;
      }
      await client.query('commit');
    } catch (error) {
      if (!broken) await client.query('rollback').catch(() => undefined);
      broken ??= error as Error;
      throw error;
    } finally {
      // A client whose batch failed is discarded, not pooled: its connection may be the broken one.
      // It keeps its listener: the server's 57P01 can still arrive while it is being closed.
      if (!broken) client.off('error', onError);
      client.release(broken);
    }
    if (failed > 0) throw new Error(`${failed} of ${claimed} outbox rows were not confirmed by the broker`);
    return claimed;
  }

  /**
   * Starts every publication of the batch, yielding to the event loop between slices: a batch is
   * CPU work (framing hundreds of messages), and the process usually serves HTTP too.
   */
  private async publishAll(rows: Row[]): Promise<Promise<void>[]> {
    const publications: Promise<void>[] = [];
    for (let i = 0; i < rows.length; i += PUBLISH_SLICE) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const row of rows.slice(i, i + PUBLISH_SLICE)) {
        const publication = this.publishRow(row);
        publication.catch(() => undefined); // settled (and reported) by the caller
        publications.push(publication);
      }
    }
    return publications;
  }

  private publishRow(row: Row): Promise<void> {
    const publishing = this.publishRouted(row);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no broker confirm within ${this.o.publishTimeoutMs} ms`)),
        this.o.publishTimeoutMs,
      );
    });
    return Promise.race([publishing, timeout]).finally(() => clearTimeout(timer));
  }

  /** Publishes a row to the route `rotear` gives, or when none (or nothing bound to it) to its own. */
  private publishRouted(row: Row): Promise<void> {
    // The relay's publish is a PRODUCER span of the trace the row's headers carry (when tracing
    // records); otherwise they go as they are.
    return publicando(
      `publish ${row.exchange}`,
      row.headers,
      { 'messaging.message.id': row.message_id, 'hub.outbox': true },
      (headers) => this.publishRoutedWith(row, headers),
    );
  }

  private async publishRoutedWith(row: Row, headers: Record<string, unknown> | undefined): Promise<void> {
    const { broker } = this.options;
    const content = Buffer.from(row.body);
    const properties = { messageId: row.message_id, ...(headers ? { headers } : {}) };
    const rota = this.options.rotear?.(row);
    if (rota) {
      try {
        return await broker.publish(rota.exchange, rota.routingKey, content, { ...properties, mandatory: true });
      } catch (error) {
        if (!(error instanceof UnroutableError)) throw error;
      }
    }
    await broker.publish(row.exchange, row.routing_key, content, properties);
  }

  private async work(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const seen = this.generation;
      let claimed = 0;
      if (this.options.broker.connected) {
        try {
          claimed = await this.publishBatch();
          failures = 0;
        } catch (error) {
          failures += 1;
          this.options.logger.warn({ err: error, failures }, 'outbox: batch failed; backing off');
        }
      }
      if (this.stopping) break;
      if (failures > 0) {
        await this.pause(Math.min(this.o.maxBackoffMs, 200 * 2 ** failures) * (0.5 + Math.random() / 2), false);
      } else if (claimed < this.o.batchSize && seen === this.generation) {
        await this.pause(this.o.pollIntervalMs, true);
      }
    }
  }

  /** Sleeps; a wake() cuts it short when `wakeable` (a stop always does). */
  private pause(ms: number, wakeable: boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(onWake);
        resolve();
      };
      const onWake = () => {
        if (wakeable || this.stopping) done();
        else this.waiters.add(onWake);
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(onWake);
    });
  }
}
