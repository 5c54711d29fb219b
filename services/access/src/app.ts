import { createGuards, createTokenVerifier } from '@hub/auth';
import { ApiRouter, createHttpApp } from '@hub/http';
import type { Logger } from '@hub/log';
import type { AccessConfig } from './config';
import type { Db } from './db';
import type { AccessEvents } from './events';
import { acessoAtualRoutes } from './features/acesso-atual/acesso-atual.routes';
import { LocalAccessResolver } from './features/acesso-atual/local-resolver';
import { AcessosRepository } from './features/acessos/acessos.repository';
import { acessosRoutes } from './features/acessos/acessos.routes';
import { AcessosService } from './features/acessos/acessos.service';
import { ColaboradoresService } from './features/colaboradores/colaboradores.service';
import { colaboradoresRoutes } from './features/colaboradores/colaboradores.routes';
import { PerfisService } from './features/perfis/perfis.service';
import { perfisRoutes } from './features/perfis/perfis.routes';

export interface AccessDeps {
  config: Pick<AccessConfig, 'COMPANY_DOMAIN' | 'IDENTITY_JWKS_URL' | 'IDENTITY_ISSUER' | 'IDENTITY_AUDIENCE' | 'IDENTITY_ALGORITHMS' | 'ACCESS_LOGIN_TOUCH_INTERVAL'>;
  db: Db;
  events: AccessEvents;
  logger: Logger;
  readiness?: Record<string, () => Promise<unknown>>;
}

/** The composition root of the access service (area A). No I/O here. */
export function createApp({ config, db, events, logger, readiness }: AccessDeps) {
  const verifier = createTokenVerifier({
    jwksUrl: config.IDENTITY_JWKS_URL,
    issuer: config.IDENTITY_ISSUER,
    audience: config.IDENTITY_AUDIENCE,
    algorithms: config.IDENTITY_ALGORITHMS,
  });
  const acessos = new AcessosRepository(db);
  const guards = createGuards(verifier, new LocalAccessResolver(acessos, config.ACCESS_LOGIN_TOUCH_INTERVAL));
  const router = new ApiRouter();
  acessoAtualRoutes(router, guards);
  acessosRoutes(router, guards, new AcessosService(acessos, events, config.COMPANY_DOMAIN), acessos);
  perfisRoutes(router, guards, new PerfisService(db, events));
  colaboradoresRoutes(router, guards, new ColaboradoresService(db, events));
  return createHttpApp({
    service: 'access',
    logger,
    routers: [router],
    readiness: { postgresql: () => db.$queryRaw`select 1`, ...readiness },
  });
}
