import { type RequestHandler, Router } from 'express';
import { AppError } from '@hub/http';
import type { createOpenApiSource } from './openapi.service';
import { renderDocsPage } from './docs.page';

type OpenApiSource = ReturnType<typeof createOpenApiSource>;

/** GET /openapi.json (the merged document) and GET /docs (the same, as a page). */
export function openApiRouter(source: OpenApiSource, upstreamCount: number): Router {
  const router = Router();
  const load = async () => {
    const merged = await source.get();
    if (upstreamCount > 0 && merged.missing.length === upstreamCount)
      throw new AppError(
        502,
        'servico_indisponivel',
        'no service answered with its OpenAPI document; try again shortly',
      );
    return merged;
  };
  const json: RequestHandler = async (_req, res) => {
    const { document, missing } = await load();
    res.set('cache-control', missing.length ? 'no-store' : 'public, max-age=10');
    res.json(document);
  };
  const page: RequestHandler = async (_req, res) => {
    const { document } = await load();
    res.set(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
    );
    res.type('html').send(renderDocsPage(document));
  };
  router.get('/openapi.json', json);
  router.get('/docs', page);
  return router;
}
