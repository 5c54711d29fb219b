import { type AccessResolver, createGuards, type TokenVerifier } from '@hub/auth';
import type { Broker } from '@hub/broker';
import { PRONTIDAO, runOnPrisma, type SqlPool } from '@hub/database';
import { admission, createHttpApp } from '@hub/http';
import type { Logger } from '@hub/log';
import type { KeyStore } from '@hub/signing';
import { userOrApplication } from './auth/usuario-ou-aplicativo';
import type { Db } from './db';
import type { DestinationPolicy } from '@hub/destinations';
import { verificadorDeDestino } from './features/assinaturas/verificador-de-destino';
import { aplicativosRoutes } from './features/aplicativos/aplicativos.routes';
import { aplicativosService } from './features/aplicativos/aplicativos.service';
import { assinaturasRoutes } from './features/assinaturas/assinaturas.routes';
import { assinaturasService } from './features/assinaturas/assinaturas.service';
import { chavesRoutes } from './features/chaves/chaves.routes';
import { esquemasRoutes } from './features/esquemas/esquemas.routes';
import { entregasRepository } from './features/entregas/entregas.repository';
import { entregasRoutes } from './features/entregas/entregas.routes';
import { entregasService } from './features/entregas/entregas.service';
import type { ConciliacaoDaFilaDeErro } from './features/fila/conciliacao';
import { filaRoutes } from './features/fila/fila.routes';
import type { FilasDaTopologia } from './features/fila/fila.service';
import { reprocessamentoRepository } from './features/reprocessamento/reprocessamento.repository';
import { reprocessamentoRoutes } from './features/reprocessamento/reprocessamento.routes';
import { reprocessamentoService } from './features/reprocessamento/reprocessamento.service';
import { reproducaoRepository } from './features/reproducao/reproducao.repository';
import { reproducaoRoutes } from './features/reproducao/reproducao.routes';
import { reproducaoService } from './features/reproducao/reproducao.service';
import { eventosRepository } from './features/eventos/eventos.repository';
import { eventosRoutes } from './features/eventos/eventos.routes';
import { eventosService } from './features/eventos/eventos.service';
import { resumoRepository } from './features/eventos/resumo.repository';
import { eventosRecusadosRepository } from './features/eventos-recusados/eventos-recusados.repository';
import { eventosRecusadosRoutes } from './features/eventos-recusados/eventos-recusados.routes';
import { eventosRecusadosService } from './features/eventos-recusados/eventos-recusados.service';
import { destinosRoutes } from './features/destinos/destinos.routes';
import { destinosService } from './features/destinos/destinos.service';
import { tentativasRepository } from './features/tentativas/tentativas.repository';
import { tentativasRoutes } from './features/tentativas/tentativas.routes';
import { tentativasService } from './features/tentativas/tentativas.service';
import { publicacaoRoutes } from './features/publicacao/publicacao.routes';
import type { DespachanteOptions } from './features/publicacao/despacho';
import { tiposRoutes } from './features/tipos-de-evento/tipos-de-evento.routes';
import { tiposService } from './features/tipos-de-evento/tipos-de-evento.service';
import { versoesRoutes } from './features/versoes-de-esquema/versoes-de-esquema.routes';
import { versoesService } from './features/versoes-de-esquema/versoes-de-esquema.service';
import type { MetricasDoHub } from './metricas';
import { rateLimitPerApplication } from './rate-limit';
import { noPoolDosAplicativos, rotasDoAssinante } from './rotas-do-assinante';
import type { ValidadorDeEsquemas } from './validation/esquemas';
import { createUseCases, type HubApiCasos } from './use-cases';

export { createUseCases, type HubApiCasos } from './use-cases';

type Guards = ReturnType<typeof createGuards>;

export interface HubApiAppDeps {
  db: Db;
  /** Publication's group write goes through these connections, as a prepared statement. */
  sql: SqlPool;
  verifier: TokenVerifier;
  resolver: AccessResolver;
  /** The delivery-signing keys; only their public part is served. */
  keys: Pick<KeyStore, 'jwks'>;
  /** Where subscriptions may point (HUB_AMBIENTE, DESTINATION_ALLOWLIST, DESTINATION_ALLOW_HTTP). */
  destinos: DestinationPolicy;
  logger: Logger;
  /** The process's schema validator; the shared one unless told otherwise. */
  esquemas?: ValidadorDeEsquemas;
  /** When given, readiness also needs RabbitMQ. */
  broker?: Broker;
  /** Publication's route for a job of a destination with a queue of its own (DestinosIsolados.rotearMensagem). */
  rotearTrabalho?: DespachanteOptions['rotear'];
  /** The clock of the summary's hourly bands (tests drive it). */
  relogio?: () => Date;
  /** Life of publication's cached lookups; 5 s unless told. */
  cacheTtlMs?: number;
  /** How long a schema being registered may take to compile, in its worker thread (10 s unless told). */
  limiteDaCompilacaoMs?: number;
  /** The error queue's reconciliation (RabbitMQ), run after a resend and by POST /fila/erro/conciliar. */
  conciliacao: ConciliacaoDaFilaDeErro;
  /** The queues of the delivery topology, for GET /fila. */
  filas: FilasDaTopologia;
  /** hub-api's metrics (one set per process); made here when absent. */
  metricas?: MetricasDoHub;
  /** Age of the oldest unpublished outbox row, for /metrics (the relay's). */
  atrasoDaOutbox?: () => Promise<number>;
  /** Wakes the reprocessing runner after a request is made. */
  acordarReprocessamento?: () => void;
  /** Wakes the replay runner after a replay is asked for. */
  acordarReproducao?: () => void;
  /** REPLAY_MAX_EVENTS (default 1,000,000). */
  maximoDeEventosDaReproducao?: number;
  /** POST /assinaturas/{id}/reproduzir per application and minute in this instance; one more is 429 (default 10). */
  reproducoesPorMinuto?: number;
  /** Publications under way at once in this process; one more is answered 503 sobrecarregado (default 1000). */
  publicacoesEmAndamento?: number;
  /** HUB_PUBLICACOES_TEMPO_ALVO, in ms. */
  publicacoesTempoAlvoMs?: number;
  /** Requests of applications to /entregas and /assinaturas under way at once; one more is 503 sobrecarregado (default 200). */
  consultasDeAplicativosEmAndamento?: number;
  /** POST /eventos per application and minute in this instance; one more is 429 (default 120,000, the gateway's). */
  publicacoesPorMinuto?: number;
  /** POST /entregas/{id}/reenviar per application and minute in this instance; one more is 429 (default 600). */
  reenviosPorMinuto?: number;
  /** HUB_ASSINATURAS_POR_APLICATIVO (default 100), HUB_ALTERACOES_DE_ASSINATURAS_POR_MINUTO (default 60). */
  assinaturasPorAplicativo?: number;
  alteracoesDeAssinaturasPorMinuto?: number;
  /** HUB_GATEWAY_URL: where the portal links point. */
  gatewayUrl?: string;
  /**
   * The connections of those requests (`db` unless given): a pool of their own, so that reads of a
   * subscribing application waiting on the database never take the panel's, readiness' or
   * publication's lookups' connections.
   */
  dbDeAplicativos?: Db;
  /**
   * The operators' lists, filters and summaries of events, deliveries, attempts and refused events
   * (`db` unless given): a read replica's pool (HUB_DATABASE_READ_URL), so the panel stays readable
   * while the primary fails over. A read that must see a write just made (one delivery after its
   * resend, a subscription after its change) stays on `db` (docs/decisions/read-replica.md).
   */
  dbDeLeitura?: Db;
}

/** The subscriptions' and deliveries' services and the replays', shared by the panel's routes and the subscribers'. */
function sharedServices(deps: HubApiAppDeps, casos: HubApiCasos) {
  const { aplicativos, tipos, versoes, assinaturas, destinos } = casos;
  const depsDeAssinaturas: Parameters<typeof assinaturasService>[0] = {
    db: deps.db,
    assinaturas,
    aplicativos,
    tipos,
    versoes,
    verificarDestino: verificadorDeDestino(deps.destinos, deps.logger),
    garantirDestino: (url, tx) => destinos.garantir(url, tx),
    aoSairDaFilaDeErro: () => deps.conciliacao.agendar(),
  };
  // A registry write of this process drops publication's caches once it settles (registro-em-cache.ts).
  const assinaturasDoPainel = casos.registro.aposEscrever(assinaturasService(depsDeAssinaturas), [
    'criar',
    'atualizar',
    'excluir',
  ]);
  const entregas = entregasService({
    db: deps.db,
    repo: entregasRepository(deps.db),
    leitura: entregasRepository(deps.dbDeLeitura ?? deps.db),
    aoSairDaFilaDeErro: () => deps.conciliacao.agendar(),
  });
  const reproducoesNo = (db: Db) =>
    reproducaoService({
      repo: reproducaoRepository(db),
      maximoDeEventos: deps.maximoDeEventosDaReproducao ?? 1_000_000,
      acordar: deps.acordarReproducao ?? (() => undefined),
    });
  return {
    depsDeAssinaturas,
    assinaturas: assinaturasDoPainel,
    entregas,
    reproducoesNo,
    reproducoes: reproducoesNo(deps.db),
  };
}
type SharedServices = ReturnType<typeof sharedServices>;

/** POST /eventos and /evento: admitted while the latency holds (adaptive limit), per application per minute. */
function publicationRoutes(deps: HubApiAppDeps, casos: HubApiCasos, guards: Guards) {
  return publicacaoRoutes({
    service: casos.publicacao,
    aplicativos: casos.registro.aplicativos,
    registrarRecusa: casos.registrarRecusa,
    guards,
    admission: admission({
      what: 'publications',
      max: deps.publicacoesEmAndamento ?? 1_000,
      targetMs: deps.publicacoesTempoAlvoMs,
      // As the gateway's publication limit: a slow day's hub-api still takes 16 at once.
      min: 16,
      onShed: () => casos.metricas.sobrecarga.inc(),
    }),
    rateLimit: rateLimitPerApplication({
      policy: 'aplicativo',
      perMinute: deps.publicacoesPorMinuto ?? 120_000,
      what: 'publications',
    }),
  });
}

/** The registry's routes: keys, applications, types, versions and schemas; each write drops the caches. */
function registryRoutes(deps: HubApiAppDeps, casos: HubApiCasos, guards: Guards) {
  const { aplicativos, tipos, versoes, validador } = casos;
  const esquecer = casos.registro.aposEscrever;
  return [
    chavesRoutes(deps.keys),
    aplicativosRoutes({
      service: esquecer(aplicativosService({ db: deps.db, repository: aplicativos }), ['criar', 'atualizar']),
      guards,
    }),
    tiposRoutes({
      service: esquecer(tiposService({ db: deps.db, repository: tipos, aplicativos }), [
        'criar',
        'atualizar',
        'excluir',
      ]),
      guards,
    }),
    versoesRoutes({
      service: esquecer(versoesService({ db: deps.db, versoes, tipos, validador }), ['criar', 'atualizar']),
      guards,
    }),
    esquemasRoutes({ versoes, leitor: userOrApplication(deps.verifier, deps.resolver, aplicativos) }),
  ];
}

/** The subscribing applications' own routes (rotas-do-assinante.ts), on their own pool when there is one. */
function subscriberRoutes(deps: HubApiAppDeps, casos: HubApiCasos, guards: Guards, shared: SharedServices) {
  return rotasDoAssinante({
    db: deps.db,
    dbDeAplicativos: deps.dbDeAplicativos ?? deps.db,
    guards,
    registro: casos.registro,
    aplicativos: casos.aplicativos,
    leituras: deps.dbDeAplicativos
      ? noPoolDosAplicativos(deps.dbDeAplicativos, shared.depsDeAssinaturas, () => deps.conciliacao.agendar())
      : { entregas: shared.entregas, assinaturas: shared.assinaturas, donoDaAssinatura: casos.assinaturas },
    assinaturas: shared.assinaturas,
    gatewayUrl: deps.gatewayUrl ?? 'http://localhost:8080',
    relogio: deps.relogio,
    consultasEmAndamento: deps.consultasDeAplicativosEmAndamento ?? 200,
    reenviosPorMinuto: deps.reenviosPorMinuto ?? 600,
    assinaturasPorAplicativo: deps.assinaturasPorAplicativo ?? 100,
    alteracoesPorMinuto: deps.alteracoesDeAssinaturasPorMinuto ?? 60,
    // The applications' replays on their own pool, as their other routes: never the panel's connections.
    reproducoes: deps.dbDeAplicativos ? shared.reproducoesNo(deps.dbDeAplicativos) : shared.reproducoes,
    reproducoesPorMinuto: deps.reproducoesPorMinuto ?? 10,
  });
}

/** The HTTP app of the hub (area C). No I/O happens here. */
export function createApp(deps: HubApiAppDeps, casos: HubApiCasos = createUseCases(deps)) {
  const guards = createGuards(deps.verifier, deps.resolver);
  const leitura = deps.dbDeLeitura ?? deps.db;
  const shared = sharedServices(deps, casos);
  const publicacao = publicationRoutes(deps, casos, guards);

  return createHttpApp({
    service: 'hub-api',
    logger: deps.logger,
    metrics: (registry) =>
      casos.metricas.registrar(registry, {
        atrasoDaOutbox: deps.atrasoDaOutbox ?? (async () => 0),
        filas: deps.filas,
      }),
    // The publications go straight to their router, ahead of the others (which keep their order, and
    // the OpenAPI document with it): express tries every router's routes in turn, and with
    // publication's last that walk was about 5 % of hub-api's CPU per publication (docs/benchmarks.md,
    // "hub-api's CPU per publication"). Only its POSTs: its GET /evento/{id} would answer 404 for
    // /evento/filtro before the events' router saw it. It stays in `routers` too, for the document.
    before: (app) =>
      app.post(
        publicacao.specs.filter((spec) => spec.method === 'post').map((spec) => spec.path),
        publicacao.router,
      ),
    routers: [
      ...registryRoutes(deps, casos, guards),
      assinaturasRoutes({ service: shared.assinaturas, guards }),
      // Before GET /evento/{id}: /evento/filtro and /evento/resumo are not ids.
      eventosRoutes({
        service: eventosService({
          db: leitura,
          repositories: { eventos: eventosRepository(leitura), resumo: resumoRepository(leitura) },
          relogio: deps.relogio,
        }),
        guards,
      }),
      eventosRecusadosRoutes({ service: eventosRecusadosService(eventosRecusadosRepository(leitura)), guards }),
      tentativasRoutes({ service: tentativasService(tentativasRepository(leitura)), guards }),
      destinosRoutes({
        service: destinosService({ repository: casos.destinos, relogio: deps.relogio, logger: deps.logger }),
        guards,
      }),
      entregasRoutes({ service: shared.entregas, guards }),
      ...subscriberRoutes(deps, casos, guards, shared),
      reproducaoRoutes({ service: shared.reproducoes, guards }),
      reprocessamentoRoutes({
        service: reprocessamentoService({
          db: deps.db,
          repo: reprocessamentoRepository(deps.db),
          acordar: deps.acordarReprocessamento ?? (() => undefined),
        }),
        guards,
      }),
      filaRoutes({ filas: deps.filas, conciliacao: deps.conciliacao, guards }),
      publicacao,
    ],
    readiness: {
      postgresql: () => runOnPrisma(deps.db, PRONTIDAO),
      ...(deps.broker ? { rabbitmq: deps.broker.ready } : {}),
    },
  });
}
