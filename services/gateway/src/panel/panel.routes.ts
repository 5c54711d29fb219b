import { existsSync } from 'node:fs';
import path from 'node:path';
import { AppError, badRequest } from '@hub/http';
import express, { Router } from 'express';
import { z } from 'zod';

/** Where `pnpm --filter @hub/panel build` writes the panel (services/panel/dist). */
export const PANEL_DIST = path.resolve(__dirname, '../../../panel/dist');
const TOKEN_TIMEOUT_MS = 5000;

export interface PanelOptions {
  /** The built panel's folder; read on each request, so a build after the start is served. */
  dir?: string;
  ambiente: 'LOCALHOST' | 'SANDBOX' | 'PRODUCTION';
  /** identity-dev's POST /token, for the sign-in page of LOCALHOST only. */
  identityTokenUrl?: string;
}

const entrada = z.object({
  email: z.string().trim().min(3).max(160),
  nome: z.string().trim().max(160).optional(),
  master: z.boolean().optional(),
});

const notBuilt = () =>
  new AppError(
    503,
    'painel_nao_construido',
    'the panel has not been built: run `pnpm build` (or `pnpm --filter @hub/panel build`) and reload',
  );

/**
 * The panel at /painel/ and the subscribers' portal at /portal/: hashed assets cached for a year, every other path answered with index.html
 * (the app routes deep links itself, never cached). In LOCALHOST, POST /painel/entrar asks
 * identity-dev for a user token on the panel's behalf, so the browser talks to one origin only. Never
 * elsewhere: it hands anyone who reaches the gateway a token for any e-mail, master included; in
 * SANDBOX and PRODUCTION the panel asks for a token of the identity service instead.
 */
export function panelRouter({ dir = PANEL_DIST, ambiente, identityTokenUrl }: PanelOptions): Router {
  const router = Router();
  const index = path.join(dir, 'index.html');
  const portal = path.join(dir, 'portal.html');
  const signIn = ambiente === 'LOCALHOST' && identityTokenUrl !== undefined;

  // Not strict routing: '/painel' matches '/painel/' too, which must not redirect to itself.
  router.get('/painel', (req, res, next) => (req.path === '/painel' ? res.redirect(301, '/painel/') : next()));
  router.get('/painel/ambiente.json', (_req, res) => {
    res.set('cache-control', 'no-store').json({ ambiente, entrar: signIn });
  });
  if (signIn) {
    router.post('/painel/entrar', express.json({ limit: '4kb' }), async (req, res) => {
      const parsed = entrada.safeParse(req.body);
      if (!parsed.success) throw badRequest('corpo_invalido', 'send { email, nome?, master? }');
      const response = await fetch(identityTokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(parsed.data),
        signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      }).catch(() => {
        throw new AppError(502, 'identidade_indisponivel', 'the identity service did not answer');
      });
      res
        .status(response.status)
        .set('cache-control', 'no-store')
        .type(response.headers.get('content-type') ?? 'application/json')
        .send(Buffer.from(await response.arrayBuffer()));
    });
  }
  router.use(
    '/painel/assets',
    express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false, redirect: false }),
    (_req, _res, next) =>
      next(existsSync(index) ? new AppError(404, 'nao_encontrado', 'no such panel file') : notBuilt()),
  );
  router.use('/painel', express.static(dir, { index: false, maxAge: 0, redirect: false }));
  router.get('/painel/{*rota}', (_req, res) => {
    if (!existsSync(index)) throw notBuilt();
    res.set('cache-control', 'no-cache').sendFile(index);
  });
  // The subscribers' portal: a second page of the same build (its assets under /painel/assets). Its
  // token travels in the fragment, which never reaches this server.
  router.get('/portal', (req, res, next) => (req.path === '/portal' ? res.redirect(301, '/portal/') : next()));
  router.get(['/portal/', '/portal/{*rota}'], (_req, res) => {
    if (!existsSync(portal)) throw notBuilt();
    res.set('cache-control', 'no-cache').sendFile(portal);
  });
  return router;
}
