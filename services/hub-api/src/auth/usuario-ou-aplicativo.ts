import { type AccessResolver, bearerToken, type Guarded, type Guards, type TokenVerifier } from '@hub/auth';
import { forbidden } from '@hub/http';
import type { Request, RequestHandler, Response } from 'express';
import type { AplicativosRepository } from '../features/aplicativos/aplicativos.repository';

/** The `typ` a token claims, read without trusting it: it only picks which check runs. */
function claimedType(token: string): unknown {
  try {
    const payload = token.split('.')[1] ?? '';
    return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { typ?: unknown }).typ;
  } catch {
    return undefined;
  }
}

interface AplicativoDoToken {
  id: string;
  ativo: boolean;
}

/** The application of a token must be registered in the hub (403 otherwise). */
export function exigirRegistrado<A extends AplicativoDoToken>(aplicativo: A | null, clientId: string): A {
  if (!aplicativo)
    throw forbidden(`the application ${clientId} is not registered in the hub`, 'aplicativo_nao_registrado');
  return aplicativo;
}

/** The application of a token must be switched on (403 otherwise). */
export function exigirAtivo(aplicativo: AplicativoDoToken, clientId: string): void {
  if (!aplicativo.ativo) throw forbidden(`the application ${clientId} is switched off`, 'aplicativo_inativo');
}

/**
 * A guard that accepts a signed-in user with an active access (any permission), or the token of
 * a registered, active application. For what both the panel and the applications read (schemas).
 */
export function userOrApplication(
  verifier: TokenVerifier,
  resolver: AccessResolver,
  aplicativos: AplicativosRepository,
): Guarded {
  const guard: RequestHandler = async (req, _res, next) => {
    const token = bearerToken(req.get('authorization'));
    if (claimedType(token) === 'aplicativo') {
      const claims = await verifier.application(token);
      exigirAtivo(exigirRegistrado(await aplicativos.buscarPorClientId(claims.sub), claims.sub), claims.sub);
      req.aplicativo = claims;
    } else {
      const claims = await verifier.user(token);
      req.usuario = claims;
      req.acesso = await resolver.resolve(claims, token);
    }
    next();
  };
  return {
    guards: [guard],
    permission: 'an authenticated user with an active access, or the token of a registered active application',
    security: ['bearer', 'aplicativo'],
  };
}

/** Applications by client id, as the guards read them (app.ts gives them cached). */
export interface AplicativosPorClientId {
  buscarPorClientId(clientId: string): Promise<(AplicativoDoToken & { id: string }) | null>;
}

/** Looks up a portal token (features/portal): the application it opens now, or a 401. */
export interface VerificadorDoPortal {
  ehDoPortal(token: string): boolean;
  verificar(token: string): Promise<AplicativoDoToken & { clientId: string }>;
}

/**
 * The token of a registered, active application (401 for any other token, a panel user's included;
 * 403 when the application is unknown to the hub or switched off), or, with `portal`, a portal
 * link's token, which stands for its application on these routes only. The application's id is
 * then `aplicativoDaRequisicao(res)`, and `req.aplicativo.sub` its client_id, which the budgets per
 * application count (a portal's requests count as the application's).
 */
export function aplicativoRegistrado(
  guards: Guards,
  aplicativos: AplicativosPorClientId,
  portal?: VerificadorDoPortal,
): Guarded {
  const token = guards.application();
  const [autenticar] = token.guards;
  /** The identity service's application token, as every application route checks it. */
  const doAplicativo = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) => {
      Promise.resolve(autenticar!(req, res, (erro?: unknown) => (erro ? reject(erro) : resolve()))).catch(reject);
    });
  const registrado: RequestHandler = async (req, res, next) => {
    const bearer = bearerToken(req.headers.authorization);
    if (portal?.ehDoPortal(bearer)) {
      const aplicativo = await portal.verificar(bearer);
      exigirAtivo(aplicativo, aplicativo.clientId);
      req.aplicativo = { sub: aplicativo.clientId, typ: 'aplicativo' };
      res.locals.aplicativoId = aplicativo.id;
      return next();
    }
    await doAplicativo(req, res);
    const clientId = req.aplicativo!.sub;
    const aplicativo = exigirRegistrado(await aplicativos.buscarPorClientId(clientId), clientId);
    exigirAtivo(aplicativo, clientId);
    res.locals.aplicativoId = aplicativo.id;
    next();
  };
  return {
    ...token,
    guards: [registrado],
    permission: portal
      ? "the token of a registered, active application, or of a link to the subscribers' portal of one"
      : 'the token of a registered, active application',
  };
}

/** The id of the application `aplicativoRegistrado` let through. */
export function aplicativoDaRequisicao(res: Response): string {
  const id = res.locals.aplicativoId;
  if (typeof id !== 'string') throw new Error('aplicativoRegistrado did not run before this handler');
  return id;
}
