import type { Express } from 'express';
import path from 'node:path';
import { accessChecks, createGuards } from '@hub/auth';
import { Broker } from '@hub/broker';
import { type ColaboradorSincronizado, declareInternalTopology, EXCHANGES } from '@hub/contracts';
import { ensureDatabase, migrate } from '@hub/database';
import { listen } from '@hub/http';
import type { Logger } from '@hub/log';
import { OutboxRelay } from '@hub/outbox';
import { createApp } from './app';
import type { DestinoDosAnuncios } from './features/funcoes/funcoes.repository';
import type { FunctionConfig } from './config';
import { createDb, type Db } from './db';
import { colaboradoresRepository } from './features/colaboradores/colaboradores.repository';
import { consumeColaboradores } from './jobs/colaboradores.consumer';

export const MIGRATIONS_DIR = path.join(__dirname, '..', 'migrations');

export interface StartOptions {
  /** Port to listen on; config.FUNCTION_PORT unless given (0 for any). */
  port?: number;
  /**
   * Consume collaborators from this queue instead of the shared durable one; it is declared
   * non-durable, bound to the identity exchange and deleted with the connection (tests, benchmarks).
   */
  colaboradoresQueue?: string;
  /** Called after each collaborator message was applied (changed) or ignored as stale. */
  onColaborador?: (mensagem: ColaboradorSincronizado, changed: boolean) => void;
  /** Where renames announce collaborators; the platform-events exchange unless given (benchmarks). */
  destino?: DestinoDosAnuncios;
}

export interface RunningFunction {
  /** The express app it serves (route tables in tests). */
  app: Express;
  url: string;
  /** The Unix socket it also serves on (its *_SOCKET setting), when set. */
  socket?: string;
  port: number;
  db: Db;
  broker: Broker;
  relay: OutboxRelay;
  stop(): Promise<void>;
}

/** Migrates, connects, consumes collaborators, relays the outbox and serves HTTP. */
export async function startFunction(
  config: FunctionConfig,
  logger: Logger,
  options: StartOptions = {},
): Promise<RunningFunction> {
  await ensureDatabase(config.FUNCTION_DATABASE_URL);
  await migrate(config.FUNCTION_DATABASE_URL, MIGRATIONS_DIR, logger);
  const db = createDb(config.FUNCTION_DATABASE_URL);
  const broker = await new Broker(config.RABBITMQ_URL, logger, { name: 'function' }).start();
  await broker.declare(declareInternalTopology);

  const queue = options.colaboradoresQueue;
  if (queue) {
    await broker.declare(async (channel) => {
      await channel.assertQueue(queue, { durable: false, exclusive: true });
      await channel.bindQueue(queue, EXCHANGES.identidade, '#');
    });
  }
  await consumeColaboradores(broker, colaboradoresRepository(db), logger, queue, options.onColaborador);

  const relay = await new OutboxRelay({
    databaseUrl: config.FUNCTION_DATABASE_URL,
    broker,
    logger,
    pollIntervalMs: config.OUTBOX_POLL_INTERVAL,
    retentionMs: config.OUTBOX_RETENTION,
  }).start();

  const { resolver, verifier } = await accessChecks(config, logger, broker, 'function');
  const app = createApp({
    db,
    broker,
    guards: createGuards(verifier, resolver),
    logger,
    destino: options.destino,
    atrasoDaOutbox: () => relay.atrasoSegundos(),
  });
  const server = await listen(app, options.port ?? config.FUNCTION_PORT, config.HOST, {
    socket: config.FUNCTION_SOCKET,
  });

  return {
    app,
    url: server.url,
    socket: server.socket,
    port: server.port,
    db,
    broker,
    relay,
    stop: async () => {
      // HTTP first (no new renames), then the relay drains, then the consumers finish and the
      // broker closes, and only then the database.
      await server.close();
      await relay.stop();
      await broker.close();
      await db.$disconnect();
    },
  };
}
