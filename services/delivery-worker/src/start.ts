import type { lookup as dnsLookup } from 'node:dns';
import { Broker, DELIVERY_CONSUMER_RETRY } from '@hub/broker';
import {
  DELIVERY_TOPOLOGY,
  type DeliveryTopology,
  declareDeliveryTopology,
  isolatedDeliveryTopology,
  migrarEscadasAntigas,
  urlDoEsquemaEm,
} from '@hub/contracts';
import { ensureDatabase, migrate, PRONTIDAO, runOnPrisma, SqlPool } from '@hub/database';
import { bancoIndisponivel, createHttpApp, listen } from '@hub/http';
import { createDb, type Db, HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import type { Logger } from '@hub/log';
import type { KeyStore } from '@hub/signing';
import { abrirChaves, chavesPublicadas } from './chaves';
import type { DeliveryWorkerConfig } from './config';
import { Destinos } from './features/destinos/destinos';
import { Isolamento } from './features/destinos/isolamento';
import { type EntregasRepository, entregasRepository } from './features/entregas/entregas.repository';
import { type EntregasService, entregasService, passoDaPausa } from './features/entregas/entregas.service';
import type { Recursos } from './features/entregas/recursos';
import { Remetente } from './features/entregas/remetente';
import { type VarreduraJob, varreduraJob } from './jobs/varredura.job';
import { criarMetricas, type Metricas } from './metricas';
import { relogioDoSistema } from './relogio';

export interface StartOptions {
  /** Port of health and metrics; config.DELIVERY_WORKER_PORT unless given (0 for any). */
  port?: number;
  /** Other names for the whole delivery topology (tests and benchmarks that must not share the platform's queues). */
  topologia?: DeliveryTopology;
  /** Whether the sweeper runs on its own every DELIVERY_SWEEP_INTERVAL (default true). */
  varredura?: boolean;
  /** Name resolution of deliveries; dns.lookup unless given (tests name hosts of their own). */
  lookup?: typeof dnsLookup;
}

export interface RunningDeliveryWorker {
  url: string;
  port: number;
  db: Db;
  broker: Broker;
  keys: KeyStore;
  entregas: EntregasService;
  /** The destinations' rules this process obeys now. */
  destinos: Destinos;
  /** The destinations with a queue of their own, as this process sees and consumes them. */
  isolamento: Isolamento;
  varredura: VarreduraJob;
  stop(): Promise<void>;
}

/** What the worker's parts are built on (the first half of `startDeliveryWorker`). */
interface Base {
  config: DeliveryWorkerConfig;
  logger: Logger;
  options: StartOptions;
  db: Db;
  broker: Broker;
  keys: KeyStore;
  topologia: DeliveryTopology;
  metricas: Metricas;
  repo: EntregasRepository;
  /**
   * A claim holds its delivery from the claim to the record: the wait for a turn, the POST, as long
   * again for signing and recording under load, and the record's wait for its statement
   * (DELIVERY_RECORD_SPACING). After it, another worker may take it over.
   */
  reivindicacaoMs: number;
}

/** The destinations' rules, fair scheduling, the HTTP client and the stages of a delivery, wired. */
function montarEntregas(b: Base) {
  const { config, logger, db, broker, topologia, metricas, reivindicacaoMs } = b;
  const destinos = new Destinos({
    db,
    broker,
    filaDeEntregas: topologia.filaDeEntregas,
    logger,
    intervaloMs: config.DELIVERY_DESTINOS_REFRESH,
    tetoPorProcesso: config.DELIVERY_CONCURRENCY_PER_DESTINATION,
    aoLer: () => metricas.destinosLidos.inc(),
    emAndamento: () => entregas.limite.emAndamento(),
    circuito: {
      minimoDeFalhas: config.DELIVERY_CIRCUIT_MIN_FAILURES,
      parcela: config.DELIVERY_CIRCUIT_FAILURE_SHARE,
      janelaMs: config.DELIVERY_CIRCUIT_WINDOW,
      abertoMs: config.DELIVERY_CIRCUIT_OPEN_FOR,
      abertoMaximoMs: config.DELIVERY_CIRCUIT_OPEN_MAX,
      // A claim's lease: the probe's result is known once its attempt is recorded.
      sondaMs: reivindicacaoMs,
    },
    aoMudarCircuito: (origem, para) => metricas.transicoesDoCircuito.inc({ origem, para }),
  });
  // The claim's lease (above): every job a stopped consumer had taken is settled within it.
  const isolamento = new Isolamento({
    db,
    broker,
    topologia,
    destinos,
    logger,
    metricas,
    intervaloMs: config.DELIVERY_DESTINOS_REFRESH,
    adiamentosParaIsolar: config.DELIVERY_ISOLATION_DEFERRALS,
    acumuloParaIsolar: config.DELIVERY_ISOLATION_BACKLOG,
    quietudeMs: config.DELIVERY_ISOLATION_QUIET,
    carenciaMs: config.DELIVERY_ISOLATION_GRACE,
    maximo: config.DELIVERY_ISOLATION_MAX,
    margemMs: 2 * config.DELIVERY_DESTINOS_REFRESH + reivindicacaoMs,
    processar: (message) => entregas.processarDoDestino(message),
    retry: DELIVERY_CONSUMER_RETRY,
    isUnavailable: bancoIndisponivel,
  });
  const remetente = new Remetente({
    timeoutMs: config.DELIVERY_TIMEOUT,
    ambiente: config.HUB_AMBIENTE,
    allowlist: config.DESTINATION_ALLOWLIST,
    socketsPorOrigem: config.DELIVERY_CONCURRENCY_PER_DESTINATION,
    lookup: b.options.lookup,
    aoRecusar: (host, endereco) =>
      logger.warn({ host, endereco }, 'delivery refused: the host resolves to a non-public address'),
  });
  const recursos: Recursos = {
    config: {
      passosMs: config.DELIVERY_RETRY_DELAYS,
      esperaPorDestinoMs: config.DELIVERY_DESTINATION_WAIT,
      espacamentoDosRegistrosMs: config.DELIVERY_RECORD_SPACING,
      tentativasDoConsumidor: DELIVERY_CONSUMER_RETRY.maxAttempts,
      urlDoEsquema: urlDoEsquemaEm(config.DELIVERY_SCHEMA_BASE_URL),
    },
    repo: b.repo,
    broker,
    topologia,
    metricas,
    relogio: relogioDoSistema,
    logger,
  };
  const entregas = entregasService({ recursos, keys: b.keys, remetente, destinos, isolamento });
  return { destinos, isolamento, remetente, entregas };
}

/**
 * Consumes the shared work queue. Every failure the worker can foresee is handled in the job; what
 * is left goes back through the broker's retry with backoff. A job whose claim or record met the
 * database down is never acked as done: it waits in a delay queue (confirmed before the ack) and
 * comes back, its attempt not counted, however long the outage lasts.
 */
async function consumirEntregas(b: Base, entregas: EntregasService): Promise<void> {
  await b.broker.consume(b.topologia.filaDeEntregas, entregas.processar, {
    prefetch: b.config.DELIVERY_PREFETCH,
    retry: DELIVERY_CONSUMER_RETRY,
    isUnavailable: bancoIndisponivel,
    // One basic.ack with `multiple` for the jobs settled together: fewer frames, and one settle
    // command in the quorum queue's log instead of one per job
    // (docs/decisions/delivery-worker-cpu.md).
    batchAcks: true,
  });
}

/** Health and metrics; ready while PostgreSQL, RabbitMQ and the keys are (and, given HUB_API_URL, the JWKS). */
function servirSaude(b: Base, entregas: EntregasService, destinos: Destinos) {
  const { config, db, broker, keys, metricas } = b;
  const app = createHttpApp({
    service: 'delivery-worker',
    logger: b.logger,
    routers: [],
    // Health and metrics only: no AsyncLocalStorage, which on Node 20 would hook every promise of the
    // jobs (docs/decisions/delivery-worker-cpu.md).
    requestContext: false,
    readiness: {
      postgresql: () => runOnPrisma(db, PRONTIDAO),
      rabbitmq: broker.ready,
      chaves: async () => {
        if ((await keys.signers()).length === 0) throw new Error('no active signing key');
      },
      ...(config.HUB_API_URL ? { jwks: chavesPublicadas(keys, config.HUB_API_URL) } : {}),
    },
    metrics: (registry) =>
      metricas.registrar(
        registry,
        () => entregas.limite.emAndamento(),
        () => destinos.circuitos(),
      ),
  });
  return listen(app, b.options.port ?? config.DELIVERY_WORKER_PORT, config.HOST);
}

/** Migrates, loads the keys, declares the delivery topology, consumes jobs, sweeps, serves health. */
export async function startDeliveryWorker(
  config: DeliveryWorkerConfig,
  logger: Logger,
  options: StartOptions = {},
): Promise<RunningDeliveryWorker> {
  const keys = await abrirChaves(config, logger);
  // The keys first: a worker that could not sign touches nothing.
  await ensureDatabase(config.HUB_DATABASE_URL);
  await migrate(config.HUB_DATABASE_URL, HUB_DATA_MIGRATIONS_DIR, logger);

  const topologia =
    options.topologia ??
    (config.DELIVERY_WORKER_TOPOLOGY_PREFIX
      ? isolatedDeliveryTopology(config.DELIVERY_WORKER_TOPOLOGY_PREFIX)
      : DELIVERY_TOPOLOGY);
  const passosMs = config.DELIVERY_RETRY_DELAYS;
  // One connection per POST at most, plus the statements of the batches and the sweeper.
  const db = createDb(config.HUB_DATABASE_URL, 10);
  // The claim and record of every job, as prepared statements (planned once per connection).
  const sql = new SqlPool(config.HUB_DATABASE_URL, 4, logger);
  const broker = await new Broker(config.RABBITMQ_URL, logger, { name: 'delivery-worker' }).start();
  await broker.declare((channel) => declareDeliveryTopology(channel, passosMs, topologia));
  // What still waits in the retry queues of an earlier version moves to the one ladder (hub.atraso).
  await migrarEscadasAntigas(broker, topologia, passosMs, logger);

  const metricas = criarMetricas();
  const reivindicacaoMs =
    config.DELIVERY_DESTINATION_WAIT + 2 * config.DELIVERY_TIMEOUT + config.DELIVERY_RECORD_SPACING;
  const repo = entregasRepository(sql, {
    reivindicacaoMs,
    reivindicacoesAteVeneno: config.DELIVERY_POISON_CLAIMS,
  });
  const base: Base = { config, logger, options, db, broker, keys, topologia, metricas, repo, reivindicacaoMs };
  const { destinos, isolamento, remetente, entregas } = montarEntregas(base);
  // After entregas: each pass writes its attempts in flight.
  await destinos.iniciar();
  const varredura = varreduraJob({
    ...base,
    intervaloMs: config.DELIVERY_SWEEP_INTERVAL,
    idadeMs: config.DELIVERY_SWEEP_AGE,
    // Every job of a resumed destination (or one whose circuit closed) is back from the pause's delay
    // queue by then (workers see the change within a refresh), with the sweep's usual margin.
    retomadaMs: config.DELIVERY_DESTINOS_REFRESH + passoDaPausa(passosMs) + config.DELIVERY_SWEEP_AGE,
  });
  if (options.varredura !== false) varredura.start();

  await consumirEntregas(base, entregas);
  // The isolated destinations' queues: consumed from now on, each with its destination's share.
  await isolamento.iniciar();
  const server = await servirSaude(base, entregas, destinos);

  return {
    url: server.url,
    port: server.port,
    db,
    broker,
    keys,
    entregas,
    destinos,
    isolamento,
    varredura,
    stop: async () => {
      // No new jobs; the ones waiting go back; attempts under way get DELIVERY_STOP_TIMEOUT; the
      // consumer's close waits for every handler (ack or requeue) before the connection closes.
      entregas.parar(config.DELIVERY_STOP_TIMEOUT);
      await varredura.stop();
      await isolamento.parar();
      await destinos.parar();
      await broker.close();
      await destinos.gravarRestantes();
      await remetente.close();
      await server.close();
      await sql.fechar();
      await db.$disconnect();
    },
  };
}
