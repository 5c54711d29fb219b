import { AppError } from '@hub/http';
import { type RequestHandler, Router } from 'express';
import { docsPolicy, docsRouter } from './docs.page';
import type { createOpenApiSource } from './openapi.service';

type OpenApiSource = ReturnType<typeof createOpenApiSource>;

/** GET /openapi.json (the merged document) and GET /docs (Swagger UI reading it). */
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
  router.get('/openapi.json', json);
  router.use(docsRouter(docsPolicy(source.serverUrls)));
  return router;
}
