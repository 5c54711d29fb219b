import path from 'node:path';
import { forgetOnAccessChange } from '@hub/auth';
import { Broker } from '@hub/broker';
import { declareInternalTopology, QUEUES } from '@hub/contracts';
import { ensureDatabase, migrate } from '@hub/database';
import { listen } from '@hub/http';
import { OutboxRelay } from '@hub/outbox';
import type { Logger } from '@hub/log';
import { createApp } from './app';
import type { AccessConfig } from './config';
import { createDb } from './db';
import { consumeColaboradores } from './jobs/colaboradores.consumer';

export const MIGRATIONS_DIR = path.join(__dirname, '..', 'migrations');

export interface RunningAccess {
  url: string;
  /** The Unix socket it also serves on (its *_SOCKET setting), when set. */
  socket?: string;
  broker: Broker;
  stop(): Promise<void>;
}

/** Migrates, connects, consumes the collaborator synchronisation and serves HTTP. */
export async function startAccess(
  config: AccessConfig,
  logger: Logger,
  port = config.ACCESS_PORT,
): Promise<RunningAccess> {
  await ensureDatabase(config.ACCESS_DATABASE_URL);
  await migrate(config.ACCESS_DATABASE_URL, MIGRATIONS_DIR, logger);
  const db = createDb(config.ACCESS_DATABASE_URL);
  const broker = await new Broker(config.RABBITMQ_URL, logger, { name: 'access' }).start();
  await broker.declare(declareInternalTopology);
  const { app, accessCache, sincronizacao } = createApp({
    config,
    db,
    logger,
    readiness: { rabbitmq: broker.ready },
  });
  // acesso.alterado, written to the outbox with each change, published once committed.
  const relay = await new OutboxRelay({
    databaseUrl: config.ACCESS_DATABASE_URL,
    broker,
    logger,
    pollIntervalMs: config.OUTBOX_POLL_INTERVAL,
    retentionMs: config.OUTBOX_RETENTION,
  }).start();
  await forgetOnAccessChange(broker, accessCache, 'access');
  await consumeColaboradores(broker, QUEUES.acessoColaboradores, sincronizacao);
  const server = await listen(app, port, config.HOST, { socket: config.ACCESS_SOCKET });
  return {
    url: server.url,
    socket: server.socket,
    broker,
    stop: async () => {
      await server.close();
      await relay.stop();
      await broker.close();
      await db.$disconnect();
    },
  };
}
