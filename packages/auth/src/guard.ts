import type { AcessoAtual, Acao, Area } from '@hub/contracts';
import { forbidden, type SecurityScheme } from '@hub/http';
import type { RequestHandler } from 'express';
import type { AccessResolver } from './resolver';
import { type ApplicationClaims, bearerToken, type TokenVerifier, type UserClaims } from './tokens';

declare global {
  namespace Express {
    interface Request {
      usuario?: UserClaims;
      acesso?: AcessoAtual;
      aplicativo?: ApplicationClaims;
    }
  }
}

/** What a route spec needs: the guards, and the sentence the documentation shows. */
export interface Guarded {
  guards: RequestHandler[];
  permission: string;
  /** The OpenAPI security schemes of the tokens it takes; a panel user's (`bearer`) when absent. */
  security?: readonly SecurityScheme[];
}

export type AcaoExigida = Acao | 'qualquer';

export function hasPermission(acesso: AcessoAtual, area: Area, acao: AcaoExigida): boolean {
  if (acesso.master) return true;
  const acoes = acesso.permissoes[area];
  if (!acoes) return false;
  return acao === 'qualquer' ? Object.values(acoes).some(Boolean) : acoes[acao] === true;
}

/**
 * The guards of every service. `user` authenticates a user token and resolves the caller's access
 * (refusing inactive, deleted and unregistered callers); the others add a rule on top.
 */
export function createGuards(verifier: TokenVerifier, resolver: AccessResolver) {
  const authenticateUser: RequestHandler = async (req, _res, next) => {
    const token = bearerToken(req.get('authorization'));
    const claims = await verifier.user(token);
    req.usuario = claims;
    req.acesso = await resolver.resolve(claims, token);
    next();
  };

  // Reads the header from node's request, not with req.get: it also guards POST /eventos on
  // hub-api's fast path (createHttpApp), where the request is node's own.
  const authenticateApplication: RequestHandler = async (req, _res, next) => {
    req.aplicativo = await verifier.application(bearerToken(req.headers.authorization));
    next();
  };

  const rule =
    (allowed: (acesso: AcessoAtual) => boolean, refusal: string): RequestHandler =>
    (req, _res, next) => {
      if (!req.acesso || !allowed(req.acesso)) throw forbidden(refusal);
      next();
    };

  return {
    /** Any signed-in user with an active access. */
    user: (): Guarded => ({ guards: [authenticateUser], permission: 'an authenticated user with an active access' }),
    /** The action `acao` on `area`, or any action with 'qualquer'. */
    permission: (area: Area, acao: AcaoExigida): Guarded => ({
      guards: [
        authenticateUser,
        rule(
          (acesso) => hasPermission(acesso, area, acao),
          acao === 'qualquer'
            ? `this route needs a permission of ${area}`
            : `this route needs the permission ${area}.${acao}`,
        ),
      ],
      permission: acao === 'qualquer' ? `any permission of ${area}` : `${area}.${acao}`,
    }),
    /** Masters of the identity service only, whatever permissions anybody else holds. */
    master: (): Guarded => ({
      guards: [
        authenticateUser,
        rule((acesso) => acesso.master, 'this route is for masters of the identity service only'),
      ],
      permission: 'master',
    }),
    /** An application token (publication). */
    application: (): Guarded => ({
      guards: [authenticateApplication],
      permission: 'an application token',
      security: ['aplicativo'],
    }),
  };
}

export type Guards = ReturnType<typeof createGuards>;
