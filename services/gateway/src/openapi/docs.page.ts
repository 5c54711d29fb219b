import { createRequire } from 'node:module';
import path from 'node:path';
import { Router } from 'express';

/**
 * /docs is Swagger UI (swagger-ui-dist, from npm), served by the gateway itself: the page, its
 * assets and its start-up script are all answered here, so it works offline and behind a strict
 * Content-Security-Policy. It reads /openapi.json.
 */

// `__dirname` stays this folder in the bundle too (infra/scripts/build.mjs), so the package is
// found from the gateway's node_modules wherever the bundle is written.
const swaggerUiDir = path.dirname(
  createRequire(path.join(__dirname, 'docs.page.ts')).resolve('swagger-ui-dist/package.json'),
);

/** The files of swagger-ui-dist the page uses; nothing else of the package is served. */
export const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'] as const;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Event hub API</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// Try-it-out sends the Bearer token given under "Authorize", kept in the page's memory only: never
// in localStorage, where it would outlive the tab and be read by any script of this origin (the
// panel's too). A reload asks for it again. No validator badge: that would call validator.swagger.io.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  displayRequestDuration: true,
  showExtensions: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/**
 * Only the page's own origin for scripts, styles, images and fonts; requests (the document and
 * try-it-out) to it and to the documented servers.
 */
export function docsPolicy(serverUrls: string[]): string {
  const origins = [...new Set(serverUrls.flatMap((url) => (URL.canParse(url) ? [new URL(url).origin] : [])))];
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${origins.join(' ')}`.trim(),
    "base-uri 'self'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function docsRouter(policy: string): Router {
  const router = Router();
  router.get('/docs', (_req, res) => {
    res.set('content-security-policy', policy);
    res.type('html').send(PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.set('cache-control', 'no-cache');
    res.type('js').send(INIT);
  });
  const files = new Set<string>(DOCS_ASSETS);
  router.get('/docs/assets/:file', (req, res, next) => {
    if (!files.has(req.params.file)) return next();
    res.sendFile(req.params.file, { root: swaggerUiDir, maxAge: '1h' });
  });
  return router;
}
