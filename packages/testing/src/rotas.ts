import { documentedRoutes, FRAME_ROUTES, servedRoutes } from '@hub/http';
import type { Express } from 'express';

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
