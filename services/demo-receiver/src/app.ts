import { createHttpApp, problemHandler } from '@hub/http';
import type { Logger } from '@hub/log';
import type { WebhookVerifier } from '@hub/webhook-verifier';
import express, { type Express } from 'express';
import { RecebidosStore } from './features/webhooks/recebidos.store';
import { webhooksRoutes } from './features/webhooks/webhooks.routes';
import { webhooksService } from './features/webhooks/webhooks.service';

export interface DemoReceiverDeps {
  logger: Logger;
  /** Verifies deliveries against the hub's JWKS (createVerifier of @hub/webhook-verifier, in main). */
  verifier: WebhookVerifier;
  store?: RecebidosStore;
}

export const WEBHOOK_BODY_LIMIT = '1mb';

/**
 * The demo subscriber: POST /webhooks/{assinatura_id} verifies and keeps the deliveries of that
 * subscription, GET /recebidos lists them.
 * No I/O happens here.
 */
export function createApp(deps: DemoReceiverDeps): Express {
  const service = webhooksService({
    verifier: deps.verifier,
    store: deps.store ?? new RecebidosStore(),
    logger: deps.logger,
  });
  const frame = createHttpApp({
    service: 'demo-receiver',
    logger: deps.logger,
    routers: [webhooksRoutes(service)],
    // Ready once the keys that verify deliveries can be had (cached after the first fetch).
    readiness: { jwks: () => deps.verifier.jwks() },
  });

  const app = express();
  app.disable('x-powered-by');
  // The signature covers the exact bytes sent, so they are read raw here, before the JSON parser of
  // the shared frame (which then sees a finished request and leaves req.body alone).
  app.post(
    '/webhooks/:assinatura_id',
    express.raw({ type: ['application/json', 'application/*+json'], limit: WEBHOOK_BODY_LIMIT }),
  );
  app.use(frame);
  // Errors of the raw parser (413, bad charset) never reach the frame's handler.
  app.use(problemHandler(deps.logger));
  return app;
}
