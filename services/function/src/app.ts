import { PRONTIDAO, runOnPrisma } from '@hub/database';
import type { Guards } from '@hub/auth';
import type { Broker } from '@hub/broker';
import { eventoDaPlataforma } from '@hub/contracts';
import { createHttpApp } from '@hub/http';
import type { Logger } from '@hub/log';
import { outboxLagMetric } from '@hub/outbox';
import type { Db } from './db';
import { type DestinoDosAnuncios, funcoesRepository } from './features/funcoes/funcoes.repository';
import { funcoesRoutes } from './features/funcoes/funcoes.routes';
import { funcoesService } from './features/funcoes/funcoes.service';

export interface FunctionAppDeps {
  db: Db;
  broker: Broker;
  guards: Guards;
  logger: Logger;
  /** Where renames announce collaborators; the platform-events exchange unless told otherwise. */
  destino?: DestinoDosAnuncios;
  /** Age of the oldest unpublished outbox row, for /metrics (the relay's). */
  atrasoDaOutbox?: () => Promise<number>;
}

export const DESTINO_DOS_ANUNCIOS: DestinoDosAnuncios = {
  exchange: eventoDaPlataforma.exchange,
  routingKey: eventoDaPlataforma.routingKey,
};

/** The HTTP app of the function registry (area B). No I/O happens here. */
export function createApp(deps: FunctionAppDeps) {
  const service = funcoesService({
    db: deps.db,
    repo: funcoesRepository(deps.db),
    destino: deps.destino ?? DESTINO_DOS_ANUNCIOS,
    logger: deps.logger,
  });
  return createHttpApp({
    service: 'function',
    logger: deps.logger,
    routers: [funcoesRoutes({ service: service, guards: deps.guards })],
    readiness: {
      postgresql: () => runOnPrisma(deps.db, PRONTIDAO),
      rabbitmq: deps.broker.ready,
    },
    metrics: (registry) => registry.registerMetric(outboxLagMetric(deps.atrasoDaOutbox ?? (async () => 0))),
  });
}
