import { type AccessResolver, createGuards, type TokenVerifier } from '@hub/auth';
import type { Broker } from '@hub/broker';
import type { SqlPool } from '@hub/database';
import { admission, createHttpApp } from '@hub/http';
import type { Logger } from '@hub/log';
import type { KeyStore } from '@hub/signing';
import { userOrApplication } from './auth/usuario-ou-aplicativo';
import type { Db } from './db';
import type { DestinationPolicy } from '@hub/destinations';
import { verificadorDeDestino } from './features/assinaturas/verificador-de-destino';
import { aplicativosRepository } from './features/aplicativos/aplicativos.repository';
import { aplicativosRoutes } from './features/aplicativos/aplicativos.routes';
import { aplicativosService } from './features/aplicativos/aplicativos.service';
import { assinaturasRepository } from './features/assinaturas/assinaturas.repository';
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
import { destinosRepository } from './features/destinos/destinos.repository';
import { destinosRoutes } from './features/destinos/destinos.routes';
import { destinosService } from './features/destinos/destinos.service';
import { tentativasRepository } from './features/tentativas/tentativas.repository';
import { tentativasRoutes } from './features/tentativas/tentativas.routes';
import { tentativasService } from './features/tentativas/tentativas.service';
import { publicacaoRepository } from './features/publicacao/publicacao.repository';
import { publicacaoRoutes } from './features/publicacao/publicacao.routes';
import { publicacaoService } from './features/publicacao/publicacao.service';
import { type DespachanteOptions, despachanteDeTrabalhos } from './features/publicacao/despacho';
import { gravadorEmGrupo } from './features/publicacao/gravacao-em-grupo';
import { registradorDeRecusas } from './features/publicacao/recusas';
import { tiposRepository } from './features/tipos-de-evento/tipos-de-evento.repository';
import { tiposRoutes } from './features/tipos-de-evento/tipos-de-evento.routes';
import { tiposService } from './features/tipos-de-evento/tipos-de-evento.service';
import { versoesRepository } from './features/versoes-de-esquema/versoes-de-esquema.repository';
import { versoesRoutes } from './features/versoes-de-esquema/versoes-de-esquema.routes';
import { versoesService } from './features/versoes-de-esquema/versoes-de-esquema.service';
import { criarMetricas, type MetricasDoHub } from './metricas';
import { rateLimitPerApplication } from './rate-limit';
import { registroEmCache } from './registro-em-cache';
import { noPoolDosAplicativos, rotasDoAssinante } from './rotas-do-assinante';
import { ValidadorDeEsquemas } from './validation/esquemas';

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

/** POST /eventos and POST /evento, as Express routes them (any case, a trailing slash). */

/** Repositories and the publication use case, built once per process (the app and the consumers share them). */
export function createUseCases(
  deps: Pick<
    HubApiAppDeps,
    | 'db'
    | 'sql'
    | 'logger'
    | 'esquemas'
    | 'limiteDaCompilacaoMs'
    | 'cacheTtlMs'
    | 'metricas'
    | 'broker'
    | 'rotearTrabalho'
  >,
) {
  const metricas = deps.metricas ?? criarMetricas();
  const repositorios = {
    aplicativos: aplicativosRepository(deps.db),
    tipos: tiposRepository(deps.db),
    versoes: versoesRepository(deps.db),
    assinaturas: assinaturasRepository(deps.db),
    destinos: destinosRepository(deps.db),
    publicacao: publicacaoRepository(deps.db, deps.sql),
  };
  /** Publication's lookups, cached; `registro.esquecer` is the one way they are dropped (registro-em-cache.ts). */
  const registro = registroEmCache(repositorios, deps.cacheTtlMs);
  const validador = deps.esquemas ?? new ValidadorDeEsquemas({ limiteMs: deps.limiteDaCompilacaoMs ?? 10_000 });
  // Publication's delivery jobs go to RabbitMQ once committed; the outbox takes what it does not confirm.
  const despachante = despachanteDeTrabalhos({
    broker: deps.broker,
    sql: deps.sql,
    logger: deps.logger,
    ...(deps.rotearTrabalho ? { rotear: deps.rotearTrabalho } : {}),
  });
  const publicacao = publicacaoService({
    db: deps.db,
    repo: repositorios.publicacao,
    tipos: registro.tipos,
    versoes: registro.versoes,
    assinaturas: registro.assinaturas,
    validador,
    gravador: gravadorEmGrupo(repositorios.publicacao, despachante.enviar, {
      aoEsvaziar: (itens) => metricas.itensPorEscrita.observe({ escrita: 'publicacao' }, itens),
    }),
    aoAceitar: () => metricas.aceitos.inc(),
  });
  const registrarRecusa = registradorDeRecusas(deps.db, repositorios.publicacao, deps.logger, (codigo) =>
    metricas.recusados.inc({ codigo }),
  );
  return { ...repositorios, validador, publicacao, despachante, registrarRecusa, registro, metricas };
}
export type HubApiCasos = ReturnType<typeof createUseCases>;

/** The HTTP app of the hub (area C). No I/O happens here. */
export function createApp(deps: HubApiAppDeps, casos: HubApiCasos = createUseCases(deps)) {
  const guards = createGuards(deps.verifier, deps.resolver);
  const { aplicativos, tipos, versoes, assinaturas, destinos, validador } = casos;
  const leitura = deps.dbDeLeitura ?? deps.db;
  // A registry write of this process drops publication's caches once it settles (registro-em-cache.ts).
  const esquecer = casos.registro.aposEscrever;

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
  const servicoDeAssinaturas = esquecer(assinaturasService(depsDeAssinaturas), ['criar', 'atualizar', 'excluir']);
  const servicoDeEntregas = entregasService({
    db: deps.db,
    repo: entregasRepository(deps.db),
    leitura: entregasRepository(leitura),
    aoSairDaFilaDeErro: () => deps.conciliacao.agendar(),
  });
  const reproducoesNo = (db: Db) =>
    reproducaoService({
      repo: reproducaoRepository(db),
      maximoDeEventos: deps.maximoDeEventosDaReproducao ?? 1_000_000,
      acordar: deps.acordarReproducao ?? (() => undefined),
    });
  const reproducoes = reproducoesNo(deps.db);

  const publicacao = publicacaoRoutes({
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
        service: esquecer(
          versoesService({
            db: deps.db,
            versoes,
            tipos,
            validador,
          }),
          ['criar', 'atualizar'],
        ),
        guards,
      }),
      esquemasRoutes({ versoes, leitor: userOrApplication(deps.verifier, deps.resolver, aplicativos) }),
      assinaturasRoutes({ service: servicoDeAssinaturas, guards }),
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
        service: destinosService({ repository: destinos, relogio: deps.relogio, logger: deps.logger }),
        guards,
      }),
      entregasRoutes({ service: servicoDeEntregas, guards }),
      ...rotasDoAssinante({
        db: deps.db,
        dbDeAplicativos: deps.dbDeAplicativos ?? deps.db,
        guards,
        registro: casos.registro,
        aplicativos,
        leituras: deps.dbDeAplicativos
          ? noPoolDosAplicativos(deps.dbDeAplicativos, depsDeAssinaturas, () => deps.conciliacao.agendar())
          : { entregas: servicoDeEntregas, assinaturas: servicoDeAssinaturas, donoDaAssinatura: assinaturas },
        assinaturas: servicoDeAssinaturas,
        gatewayUrl: deps.gatewayUrl ?? 'http://localhost:8080',
        relogio: deps.relogio,
        consultasEmAndamento: deps.consultasDeAplicativosEmAndamento ?? 200,
        reenviosPorMinuto: deps.reenviosPorMinuto ?? 600,
        assinaturasPorAplicativo: deps.assinaturasPorAplicativo ?? 100,
        alteracoesPorMinuto: deps.alteracoesDeAssinaturasPorMinuto ?? 60,
        // The applications' replays on their own pool, as their other routes: never the panel's connections.
        reproducoes: deps.dbDeAplicativos ? reproducoesNo(deps.dbDeAplicativos) : reproducoes,
        reproducoesPorMinuto: deps.reproducoesPorMinuto ?? 10,
      }),
      reproducaoRoutes({ service: reproducoes, guards }),
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
      postgresql: () => deps.db.$queryRaw`select 1`,
      ...(deps.broker ? { rabbitmq: deps.broker.ready } : {}),
    },
  });
}
