import type { Guards } from '@hub/auth';
import { admission, type ApiRouter } from '@hub/http';
import { aplicativoRegistrado } from './auth/usuario-ou-aplicativo';
import type { Db } from './db';
import type { AplicativosRepository } from './features/aplicativos/aplicativos.repository';
import { assinanteRoutes } from './features/assinante/assinante.routes';
import { type AssinanteDeps, assinanteService } from './features/assinante/assinante.service';
import { catalogoDeTipos } from './features/assinante/catalogo';
import { leiturasDoAssinanteRoutes } from './features/assinante/leituras.routes';
import { assinaturasPropriasRoutes } from './features/assinante/proprias.routes';
import { assinaturasPropriasService } from './features/assinante/proprias.service';
import { saudeDaAssinatura } from './features/assinante/saude';
import { assinaturasRepository } from './features/assinaturas/assinaturas.repository';
import { type AssinaturasService, assinaturasService } from './features/assinaturas/assinaturas.service';
import { entregasRepository } from './features/entregas/entregas.repository';
import { entregasService } from './features/entregas/entregas.service';
import { portalRepository } from './features/portal/portal.repository';
import { portalRoutes } from './features/portal/portal.routes';
import { portalService } from './features/portal/portal.service';
import { ehTokenDoPortal } from './features/portal/token';
import { reproducaoDoAssinanteRoutes } from './features/reproducao/reproducao.routes';
import type { ReproducaoService } from './features/reproducao/reproducao.service';
import type { RegistroEmCache } from './registro-em-cache';
import { rateLimitPerApplication } from './rate-limit';

/**
 * The panel's services on the subscribing applications' own pool (`dbDeAplicativos`): their reads
 * and resends waiting on the database never hold the connections of the panel, of readiness or of
 * publication's lookups. Only reads and the resend are used there (nothing of the registry is
 * written, so its caches need no word: the writes of /assinaturas go through the panel's service).
 */
export function noPoolDosAplicativos(
  db: Db,
  depsDeAssinaturas: Parameters<typeof assinaturasService>[0],
  aoSairDaFilaDeErro: () => void,
): AssinanteDeps {
  const dono = assinaturasRepository(db);
  return {
    entregas: entregasService({ db, repo: entregasRepository(db), aoSairDaFilaDeErro }),
    assinaturas: assinaturasService({ ...depsDeAssinaturas, db, assinaturas: dono }),
    donoDaAssinatura: dono,
  };
}

export interface RotasDoAssinanteDeps {
  db: Db;
  /** The subscribing applications' own pool (`dbDeAplicativos`), or `db`. */
  dbDeAplicativos: Db;
  guards: Guards;
  registro: RegistroEmCache;
  aplicativos: AplicativosRepository;
  /** The reads and resend, on `dbDeAplicativos` (app.ts). */
  leituras: AssinanteDeps;
  /** The panel's subscriptions service with its registry caches' word: the writes go through it. */
  assinaturas: AssinaturasService;
  gatewayUrl: string;
  relogio?: () => Date;
  consultasEmAndamento: number;
  reenviosPorMinuto: number;
  assinaturasPorAplicativo: number;
  alteracoesPorMinuto: number;
  /** The replays, for the application's own POST /assinaturas/{id}/reproduzir. */
  reproducoes: ReproducaoService;
  /** The application's replays per minute in this instance (HUB_REPRODUCOES_POR_MINUTO). */
  reproducoesPorMinuto: number;
}

/**
 * The routes of the subscribing applications (their token, or a portal link's, for the
 * application alone) and the operator's routes of the portal links
 * (docs/decisions/subscriber-reads.md, docs/decisions/subscribers-portal.md).
 */
export function rotasDoAssinante(deps: RotasDoAssinanteDeps): ApiRouter[] {
  const portal = portalService({
    db: deps.db,
    links: portalRepository(deps.db),
    aplicativos: deps.aplicativos,
    gatewayUrl: deps.gatewayUrl,
    relogio: deps.relogio,
  });
  // A link is looked up on the applications' pool: a busy portal never takes the panel's connections.
  const aplicativo = aplicativoRegistrado(deps.guards, deps.registro.aplicativos, {
    ehDoPortal: ehTokenDoPortal,
    verificar: (token) => portal.verificar(token, deps.dbDeAplicativos),
  });
  const admissao = admission({
    what: 'requests of applications to /entregas and /assinaturas',
    max: deps.consultasEmAndamento,
  });
  return [
    assinanteRoutes({
      service: assinanteService(deps.leituras),
      aplicativo,
      admission: admissao,
      reenvios: rateLimitPerApplication({ policy: 'reenvio', perMinute: deps.reenviosPorMinuto, what: 'resends' }),
    }),
    assinaturasPropriasRoutes({
      service: assinaturasPropriasService({
        assinaturas: deps.assinaturas,
        maximoDeAssinaturas: deps.assinaturasPorAplicativo,
      }),
      aplicativo,
      admission: admissao,
      alteracoes: rateLimitPerApplication({
        policy: 'assinaturas',
        perMinute: deps.alteracoesPorMinuto,
        what: 'changes of subscriptions',
      }),
    }),
    leiturasDoAssinanteRoutes({
      aplicativo,
      admission: admissao,
      catalogo: catalogoDeTipos(deps.dbDeAplicativos),
      saude: saudeDaAssinatura(deps.dbDeAplicativos, deps.relogio),
      testarFiltro: deps.assinaturas.testarFiltro,
    }),
    reproducaoDoAssinanteRoutes({
      service: deps.reproducoes,
      aplicativo,
      admission: admissao,
      orcamento: rateLimitPerApplication({
        policy: 'reproducao',
        perMinute: deps.reproducoesPorMinuto,
        what: 'replays',
      }),
    }),
    portalRoutes({ service: portal, guards: deps.guards }),
  ];
}
