import { createHash } from 'node:crypto';
import { type Broker, publishMessage } from '@hub/broker';
import { type ColaboradorSincronizado, colaboradorSincronizado } from '@hub/contracts';
import { ApiRouter, createHttpApp, notFound } from '@hub/http';
import type { Logger } from '@hub/log';
import { z } from 'zod';
import { signToken, type TokenIssuer } from './keys';

/**
 * An e-mail as the stand-in keeps it: trimmed, ASCII letters lower-cased and nothing else, as an
 * identity provider that ignores case would (String#toLowerCase would fold U+212A KELVIN SIGN onto "k").
 */
const minusculas = (email: string) => email.trim().replace(/[A-Z]+/g, (letras) => letras.toLowerCase());

export interface IdentityDevDeps {
  issuer: TokenIssuer;
  /** Absent in tests that only need tokens. */
  broker?: Broker;
  logger: Logger;
}

/** Stable identity user id of an e-mail that has no collaborator record. */
export const userIdOf = (email: string) => {
  const hex = createHash('sha256').update(minusculas(email)).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

const tokenResponse = z.object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number() });

/**
 * Stand-in for the external identity service: issues user and application tokens, serves its
 * JWKS, and publishes collaborator synchronisation as the real one would.
 */
export function createIdentityDevApp(deps: IdentityDevDeps) {
  const colaboradores = new Map<string, ColaboradorSincronizado>();
  let lastVersion = 0;
  const nextVersion = () => {
    lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
    return lastVersion;
  };
  const tokens = (access_token: string) => ({
    access_token,
    token_type: 'Bearer' as const,
    expires_in: deps.issuer.ttlSeconds,
  });

  const router = new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/.well-known/jwks.json',
        summary: 'Public keys of the identity stand-in',
        tag: 'Identidade (dev)',
        authenticated: false,
      },
      ({ res }) => {
        res.set('cache-control', 'public, max-age=300');
        return { keys: [deps.issuer.key.publicJwk] };
      },
    )
    .route(
      {
        method: 'post',
        path: '/token',
        summary: 'Issue a user token',
        tag: 'Identidade (dev)',
        authenticated: false,
        body: z
          .object({
            email: z.string().min(3).max(320),
            nome: z.string().max(200).optional(),
            master: z.boolean().optional(),
          })
          .strict(),
        response: tokenResponse,
      },
      async ({ body }) => {
        const email = minusculas(body.email);
        const colaborador = [...colaboradores.values()].find((c) => minusculas(c.email) === email);
        const sub = colaborador?.termoauth_id ?? userIdOf(email);
        const claims = {
          email,
          name: body.nome ?? colaborador?.nome ?? '',
          master: body.master ?? false,
          typ: 'usuario',
        };
        return tokens(await signToken(deps.issuer, claims, sub));
      },
    )
    .route(
      {
        method: 'post',
        path: '/token/aplicativo',
        summary: 'Issue an application token',
        tag: 'Identidade (dev)',
        authenticated: false,
        body: z.object({ client_id: z.string().min(1).max(200) }).strict(),
        response: tokenResponse,
      },
      async ({ body }) => tokens(await signToken(deps.issuer, { typ: 'aplicativo' }, body.client_id)),
    )
    .route(
      {
        method: 'put',
        path: '/colaboradores/:termoauth_id',
        summary: 'Store a collaborator and publish its synchronisation',
        tag: 'Identidade (dev)',
        authenticated: false,
        params: z.object({ termoauth_id: z.string().min(1).max(200) }),
        body: z
          .object({
            email: z.string().min(3).max(320),
            nome: z.string().max(200),
            funcao_id: z.string().nullable().optional(),
            ativo: z.boolean(),
          })
          .strict(),
      },
      async ({ params, body }) => {
        const colaborador: ColaboradorSincronizado = {
          termoauth_id: params.termoauth_id,
          email: minusculas(body.email),
          nome: body.nome,
          funcao_id: body.funcao_id ?? null,
          ativo: body.ativo,
          removido: false,
          versao: nextVersion(),
          ocorrido_em: new Date().toISOString(),
        };
        colaboradores.set(params.termoauth_id, colaborador);
        if (deps.broker) await publishMessage(deps.broker, colaboradorSincronizado, colaborador);
        return colaborador;
      },
    )
    .route(
      {
        method: 'delete',
        path: '/colaboradores/:termoauth_id',
        summary: 'Remove a collaborator and publish the removal',
        tag: 'Identidade (dev)',
        authenticated: false,
        params: z.object({ termoauth_id: z.string().min(1).max(200) }),
      },
      async ({ params }) => {
        const colaborador = colaboradores.get(params.termoauth_id);
        if (!colaborador) throw notFound('collaborator');
        colaboradores.delete(params.termoauth_id);
        if (deps.broker) {
          await publishMessage(deps.broker, colaboradorSincronizado, {
            ...colaborador,
            removido: true,
            versao: nextVersion(),
            ocorrido_em: new Date().toISOString(),
          });
        }
      },
    );

  return createHttpApp({
    service: 'identity-dev',
    logger: deps.logger,
    routers: [router],
    readiness: deps.broker ? { rabbitmq: deps.broker.ready } : {},
  });
}
