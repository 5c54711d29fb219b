import type { Express } from 'express';
import { accessChecks } from '@hub/auth';
import type { Broker } from '@hub/broker';
import type { EventoDaPlataforma } from '@hub/contracts';
import { NotificationListener, type SqlPool } from '@hub/database';
import { listen } from '@hub/http';
import type { Logger } from '@hub/log';
import { OutboxRelay } from '@hub/outbox';
import type { KeyStore } from '@hub/signing';
import { createApp, createUseCases } from './app';
import { openResources, type Resources } from './resources';

export { keySource } from './resources';
import type { HubApiConfig } from './config';
import type { Db } from './db';
import type { LookupAll } from '@hub/destinations';
import { type RetencaoJob, retencaoJob } from './jobs/retencao.job';
import { type ReprocessamentoJob, reprocessamentoJob } from './jobs/reprocessamento.job';
import { type ReproducaoJob, reproducaoJob } from './jobs/reproducao.job';
import { loteRepository } from './features/reproducao/lote.repository';
import { motorDaReproducao } from './features/reproducao/motor';
import { eventosPorLote } from './features/reproducao/ritmo';
import { type ConciliacaoDaFilaDeErro, conciliacaoDaFilaDeErro } from './features/fila/conciliacao';
import { filasDaTopologia } from './features/fila/fila.service';
import { travaDaFilaDeErro } from './features/fila/trava';
import { type DestinosIsolados, destinosIsolados } from './features/destinos/isolados';
import { reprocessamentoRepository } from './features/reprocessamento/reprocessamento.repository';
import { consumeEventosDaPlataforma } from './jobs/eventos-da-plataforma.consumer';
import type { ValidadorDeEsquemas } from './validation/esquemas';
import { CANAL_DO_REGISTRO } from '@hub/hub-data';

export interface StartOptions {
  /** Port to listen on; config.HUB_API_PORT unless given (0 for any). */
  port?: number;
  /** Name resolution for the destination checks (tests). */
  lookup?: LookupAll;
  /** The clock of the summary and the retention job (tests). */
  relogio?: () => Date;
  /**
   * Consume platform events from this queue instead of the shared durable one; it is declared
   * exclusive and bound to nothing, so only what is sent to it directly arrives (tests: a hub under
   * test must not take the platform's announcements meant for another).
   */
  eventosDaPlataformaQueue?: string;
  /** Told after each platform event was published or refused. */
  onEventoDaPlataforma?: (mensagem: EventoDaPlataforma) => void;
}

export interface RunningHubApi {
  /** The express app it serves (route tables in tests). */
  app: Express;
  url: string;
  /** The Unix socket it also serves on (its *_SOCKET setting), when set. */
  socket?: string;
  port: number;
  db: Db;
  /** The prepared statements' connections (publication's group write). */
  sql: SqlPool;
  broker: Broker;
  relay: OutboxRelay;
  /** The destinations whose new jobs the relay sends straight to their own queue. */
  isolados: DestinosIsolados;
  /** The process's one LISTEN connection: registry changes (caches) and the outbox (relay). */
  avisos: NotificationListener;
  /** The keys it serves: public ones only (HUB_SIGNING_JWKS), or the key set it reads. */
  keys: Pick<KeyStore, 'jwks'>;
  retencao: RetencaoJob;
  reprocessamento: ReprocessamentoJob;
  reproducao: ReproducaoJob;
  conciliacao: ConciliacaoDaFilaDeErro;
  /** The schema versions' validators of this process (validation/esquemas.ts). */
  validador: ValidadorDeEsquemas;
  stop(): Promise<void>;
}

/**
 * The publication path and what feeds it: the LISTEN connection, the isolated destinations, the use
 * cases (their caches dropped on every registry change), the platform events' consumer and the relay.
 */
async function startPublication(config: HubApiConfig, logger: Logger, options: StartOptions, r: Resources) {
  const { db, sql, broker } = r;
  const avisos = new NotificationListener(config.HUB_DATABASE_URL, logger, 'hub-api');
  // The destinations with a queue of their own: publication and the relay send their jobs there.
  const isolados = destinosIsolados({ db, logger, avisos, intervaloMs: config.HUB_CACHE_TTL });
  const casos = createUseCases({
    db,
    sql,
    logger,
    broker,
    cacheTtlMs: config.HUB_CACHE_TTL,
    limiteDaCompilacaoMs: config.HUB_SCHEMA_COMPILE_LIMIT,
    rotearTrabalho: isolados.rotearMensagem,
  });
  // Every write of the registry, by any process, drops this process's caches at its commit; so does
  // a reconnection of the LISTEN connection (what was announced meanwhile was missed).
  avisos.on(CANAL_DO_REGISTRO, () => casos.registro.esquecer());
  await avisos.start();

  const queue = options.eventosDaPlataformaQueue;
  if (queue) {
    await broker.declare(async (channel) => {
      await channel.assertQueue(queue, { durable: false, exclusive: true });
    });
  }
  await consumeEventosDaPlataforma({
    broker,
    publicacao: casos.publicacao,
    aplicativos: casos.aplicativos,
    tipos: casos.tipos,
    registrarRecusa: casos.registrarRecusa,
    logger,
    queue,
    onProcessado: options.onEventoDaPlataforma,
  });

  // Before the relay: a job of an isolated destination goes to its queue from the first batch.
  await isolados.iniciar();
  const relay = await new OutboxRelay({
    databaseUrl: config.HUB_DATABASE_URL,
    broker,
    logger,
    pollIntervalMs: config.OUTBOX_POLL_INTERVAL,
    retentionMs: config.OUTBOX_RETENTION,
    listener: avisos,
    rotear: isolados.rotear,
  }).start();
  return { avisos, isolados, casos, relay };
}

/** The error queue's reconciliation, reprocessing and replay; constructed here, started once the app is. */
function createJobs(config: HubApiConfig, logger: Logger, options: StartOptions, { db, broker }: Resources) {
  // The error queue's readers (reconciliation passes, looks) take their locks on sessions of their own.
  const trava = travaDaFilaDeErro(config.HUB_DATABASE_URL, logger);
  const conciliacao = conciliacaoDaFilaDeErro({ db, broker, logger, trava, paradaMs: config.HUB_CONCILIACAO_PARADA });
  const reprocessamento = reprocessamentoJob({
    db,
    repo: reprocessamentoRepository(db),
    logger,
    lote: config.HUB_REPROCESSAMENTO_LOTE,
    intervaloMs: config.HUB_REPROCESSAMENTO_INTERVALO,
    pausaMs: config.HUB_REPROCESSAMENTO_PAUSA,
    aoConcluir: () => conciliacao.agendar(),
  });
  const lotes = loteRepository(db);
  const reproducao = reproducaoJob({
    motor: motorDaReproducao({
      db,
      repo: lotes,
      lote: eventosPorLote({
        lote: config.HUB_REPRODUCAO_LOTE,
        porSegundo: config.HUB_REPRODUCAO_POR_SEGUNDO,
        pausaMs: config.HUB_REPRODUCAO_PAUSA,
      }),
      emFila: config.HUB_REPRODUCAO_EM_FILA,
      relogio: options.relogio,
    }),
    repo: lotes,
    logger,
    intervaloMs: config.HUB_REPRODUCAO_INTERVALO,
    pausaMs: config.HUB_REPRODUCAO_PAUSA,
    aoSairDaFilaDeErro: () => conciliacao.agendar(),
  });
  return { trava, conciliacao, reprocessamento, reproducao };
}

/** The app's settings, as the configuration names them. */
function appSettings(config: HubApiConfig, options: StartOptions) {
  return {
    destinos: {
      ambiente: config.HUB_AMBIENTE,
      allowlist: config.DESTINATION_ALLOWLIST,
      permitirHttp: config.DESTINATION_ALLOW_HTTP,
      lookup: options.lookup,
    },
    relogio: options.relogio,
    maximoDeEventosDaReproducao: config.REPLAY_MAX_EVENTS,
    reproducoesPorMinuto: config.HUB_REPRODUCOES_POR_MINUTO,
    publicacoesEmAndamento: config.HUB_PUBLICACOES_EM_ANDAMENTO,
    publicacoesTempoAlvoMs: config.HUB_PUBLICACOES_TEMPO_ALVO,
    consultasDeAplicativosEmAndamento: config.HUB_CONSULTAS_DE_APLICATIVOS_EM_ANDAMENTO,
    publicacoesPorMinuto: config.HUB_PUBLICACOES_POR_MINUTO,
    reenviosPorMinuto: config.HUB_REENVIOS_POR_MINUTO,
    assinaturasPorAplicativo: config.HUB_ASSINATURAS_POR_APLICATIVO,
    alteracoesDeAssinaturasPorMinuto: config.HUB_ALTERACOES_DE_ASSINATURAS_POR_MINUTO,
    gatewayUrl: config.HUB_GATEWAY_URL,
  };
}

/** Migrates, loads (or, in LOCALHOST, creates) the signing keys, listens for access changes and serves HTTP. */
export async function startHubApi(
  config: HubApiConfig,
  logger: Logger,
  options: StartOptions = {},
): Promise<RunningHubApi> {
  const resources = await openResources(config, logger);
  const { keys, db, sql, dbDeAplicativos, dbDeLeitura, broker } = resources;
  const { avisos, isolados, casos, relay } = await startPublication(config, logger, options, resources);
  const { resolver, verifier } = await accessChecks(config, logger, broker, 'hub-api');
  const { trava, conciliacao, reprocessamento, reproducao } = createJobs(config, logger, options, resources);
  const app = createApp(
    {
      ...appSettings(config, options),
      db,
      sql,
      verifier,
      resolver,
      keys,
      logger,
      broker,
      conciliacao,
      filas: filasDaTopologia({ broker, db, trava, passosMs: config.DELIVERY_RETRY_DELAYS }),
      atrasoDaOutbox: () => relay.atrasoSegundos(),
      acordarReprocessamento: () => reprocessamento.wake(),
      acordarReproducao: () => reproducao.wake(),
      dbDeAplicativos,
      dbDeLeitura,
    },
    casos,
  );
  // Requests left em_andamento by a stopped instance go on now.
  reprocessamento.start().wake();
  // Replays left open by a stopped instance (killed mid-batch included) go on from their cursor now.
  reproducao.start().wake();
  const retencao = retencaoJob({
    db,
    logger,
    recusadosMs: config.HUB_RECUSADOS_RETENCAO,
    intervaloMs: config.HUB_RETENCAO_INTERVALO,
    relogio: options.relogio,
  }).start();
  const server = await listen(app, options.port ?? config.HUB_API_PORT, config.HOST, { socket: config.HUB_API_SOCKET });

  return {
    app,
    url: server.url,
    socket: server.socket,
    port: server.port,
    db,
    sql,
    broker,
    relay,
    isolados,
    avisos,
    keys,
    retencao,
    reprocessamento,
    reproducao,
    conciliacao,
    validador: casos.validador,
    stop: async () => {
      // HTTP first (no new publications), then the jobs of what was accepted are confirmed (or in the
      // outbox), then the relay drains, then the consumers finish and the broker closes, and only
      // then the database.
      await server.close();
      await casos.despachante.parar();
      await reprocessamento.stop();
      await reproducao.stop();
      await conciliacao.parar();
      await retencao.stop();
      await relay.stop();
      await isolados.parar();
      await avisos.stop();
      await casos.validador.encerrar();
      await broker.close();
      await sql.fechar();
      await dbDeAplicativos.$disconnect();
      await dbDeLeitura?.$disconnect();
      await db.$disconnect();
    },
  };
}
