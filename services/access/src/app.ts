import { PRONTIDAO, runOnPrisma } from '@hub/database';
import { CachedAccessResolver, createGuards, createTokenVerifier } from '@hub/auth';
import { ApiRouter, createHttpApp } from '@hub/http';
import type { Logger } from '@hub/log';
import type { AccessConfig } from './config';
import type { Db } from './db';
import { type AccessEvents, writeToOutbox } from './events';
import { acessoAtualRoutes } from './features/acesso-atual/acesso-atual.routes';
import { localAccessResolver } from './features/acesso-atual/local-resolver';
import { acessosRepository } from './features/acessos/acessos.repository';
import { acessosRoutes } from './features/acessos/acessos.routes';
import { acessosService } from './features/acessos/acessos.service';
import { colaboradoresRoutes } from './features/colaboradores/colaboradores.routes';
import { colaboradoresService } from './features/colaboradores/colaboradores.service';
import { sincronizacaoService } from './features/colaboradores/sincronizacao.service';
import { perfisRoutes } from './features/perfis/perfis.routes';
import { perfisService } from './features/perfis/perfis.service';

export interface AccessDeps {
  config: Pick<
    AccessConfig,
    | 'COMPANY_DOMAIN'
    | 'IDENTITY_JWKS_URL'
    | 'IDENTITY_ISSUER'
    | 'IDENTITY_AUDIENCE'
    | 'IDENTITY_ALGORITHMS'
    | 'ACCESS_LOGIN_TOUCH_INTERVAL'
    | 'ACCESS_CACHE_TTL'
  >;
  db: Db;
  logger: Logger;
  readiness?: Record<string, () => Promise<unknown>>;
}

/**
 * The composition root of the access service (area A): repositories, then services, then routes;
 * no I/O here. Returns the permission cache too, so that the caller can also drop entries on
 * changes made by other replicas, and the synchronisation use case for the caller's consumer.
 */
export function createApp({ config, db, logger, readiness }: AccessDeps) {
  const verifier = createTokenVerifier({
    jwksUrl: config.IDENTITY_JWKS_URL,
    issuer: config.IDENTITY_ISSUER,
    audience: config.IDENTITY_AUDIENCE,
    algorithms: config.IDENTITY_ALGORITHMS,
  });
  const accessCache = new CachedAccessResolver(
    localAccessResolver(acessosRepository(db), config.ACCESS_LOGIN_TOUCH_INTERVAL),
    config.ACCESS_CACHE_TTL,
  );
  // This replica forgets before anybody is told, so its own next request already sees the change.
  const events: AccessEvents = {
    announce: writeToOutbox,
    committed: (changes) => {
      for (const change of changes) accessCache.forget(change.perfil_de_acesso_id ? undefined : change.email);
    },
  };
  const guards = createGuards(verifier, accessCache);
  const router = new ApiRouter();
  acessoAtualRoutes({ router, guards });
  acessosRoutes({ router, guards, service: acessosService({ db, events, companyDomain: config.COMPANY_DOMAIN }) });
  perfisRoutes({ router, guards, service: perfisService({ db, events }) });
  colaboradoresRoutes({ router, guards, service: colaboradoresService({ db, events }) });
  const app = createHttpApp({
    service: 'access',
    logger,
    routers: [router],
    readiness: { postgresql: () => runOnPrisma(db, PRONTIDAO), ...readiness },
  });
  return { app, accessCache, events, sincronizacao: sincronizacaoService({ db, events }) };
}
