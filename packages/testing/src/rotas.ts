import type { Express } from 'express';

/** The routes every service's frame serves besides its API: health, readiness, metrics and its own document. */
export const FRAME_ROUTES = ['GET /saude', 'GET /saude/prontidao', 'GET /metrics', 'GET /openapi.json'] as const;

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/**
 * Every route an express app really serves, as `METHOD /path` with OpenAPI's `{param}` form, read
 * from the app's own router stack (routers mounted with app.use included): what a request can
 * reach, whatever any document says.
 */
export function servedRoutes(app: Express): string[] {
  const rotas: string[] = [];
  const visitar = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const path of paths)
          for (const [method, on] of Object.entries(layer.route.methods))
            if (on && method !== '_all') rotas.push(`${method.toUpperCase()} ${path.replace(/:(\w+)/g, '{$1}')}`);
      } else if (layer.handle?.stack) visitar(layer.handle.stack);
    }
  };
  visitar((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return [...new Set(rotas)].sort();
}

/** Every operation of an OpenAPI document as `METHOD /path`. */
export function documentedRoutes(document: { paths: Record<string, Record<string, unknown>> }): string[] {
  const metodos = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options']);
  return Object.entries(document.paths)
    .flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => metodos.has(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    )
    .sort();
}

/**
 * What an app serves beside its own /openapi.json (the frame's health, metrics and document left
 * out): routes served but not documented, and documented operations nobody serves. Both empty
 * when the document is the truth.
 */
export async function rotasContraDocumento(app: Express, url: string) {
  const documento = (await (await fetch(`${url}/openapi.json`)).json()) as Parameters<typeof documentedRoutes>[0];
  const servidas = servedRoutes(app).filter((r) => !(FRAME_ROUTES as readonly string[]).includes(r));
  const documentadas = documentedRoutes(documento);
  return {
    servidas,
    naoDocumentadas: servidas.filter((r) => !documentadas.includes(r)),
    naoServidas: documentadas.filter((r) => !servidas.includes(r)),
  };
}
