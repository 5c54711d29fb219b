import type { Ambiente } from '@hub/config';
import type { RequestHandler } from 'express';

/** The API answers JSON only: nothing in an answer may load, run or be framed. */
export const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

/**
 * The panel (services/panel, built by Vite): its index.html loads one module script and one
 * stylesheet from /painel/assets, and the app calls only this origin. No inline script or style
 * attribute is allowed; styles the app sets from script (element.style) are not inline markup.
 * The favicon is a `data:` URL.
 */
export const PANEL_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const HSTS = 'max-age=31536000; includeSubDomains';

/** The panel's pages and assets, and the subscribers' portal (a page of the same build): one policy. */
const isPanel = (path: string) =>
  path === '/painel' || path.startsWith('/painel/') || path === '/portal' || path.startsWith('/portal/');

/**
 * Headers every answer of the gateway carries, its own and the services' alike: a
 * Content-Security-Policy (the panel's for /painel, the API's elsewhere; /docs sets its own), no
 * MIME sniffing, never in a frame, no Referer leaving the platform, and HSTS outside LOCALHOST
 * (a developer's machine answers on plain http, where a pinned HSTS would break other local sites).
 * As a flat [name, value, …] list for one policy, built once.
 */
export function securityHeaderList(ambiente: Ambiente, policy: string): string[] {
  return [
    'content-security-policy',
    policy,
    'x-content-type-options',
    'nosniff',
    'x-frame-options',
    'DENY',
    'referrer-policy',
    'no-referrer',
    ...(ambiente !== 'LOCALHOST' ? ['strict-transport-security', HSTS] : []),
  ];
}

/** The security headers on every answer that goes through express (see securityHeaderList). */
export function securityHeaders(ambiente: Ambiente): RequestHandler {
  const api = securityHeaderList(ambiente, API_POLICY);
  const panel = securityHeaderList(ambiente, PANEL_POLICY);
  return (req, res, next) => {
    const list = isPanel(req.path) ? panel : api;
    for (let i = 0; i < list.length; i += 2) res.setHeader(list[i]!, list[i + 1]!);
    next();
  };
}
