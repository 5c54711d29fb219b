import { AppError, ApiRouter } from '@hub/http';
import { z } from 'zod';
import type { WebhooksService } from './webhooks.service';

const tag = 'Webhooks (demo)';

export const recebidoSchema = z.object({
  webhook_id: z.string(),
  assinado_em: z.string(),
  recebido_em: z.string(),
  chave_id: z.string().nullable(),
  corpo: z.unknown(),
});

export function webhooksRoutes(service: WebhooksService): ApiRouter {
  return new ApiRouter()
    .route(
      {
        method: 'post',
        path: '/webhooks/:assinatura_id',
        summary:
          'Receive a delivery of the hub for the subscription in the path (its url_de_destino): 204 when its v1a signature verifies against the hub JWKS and its body names that subscription, else 401 assinatura_invalida',
        tag,
        params: z.object({ assinatura_id: z.uuid().describe('the subscription whose url_de_destino this is') }),
        // No bearer token: the Standard Webhooks signature is the authentication.
        authenticated: false,
        status: 204,
        refusals: {
          400: 'signed, but the body is not JSON',
          413: 'body over 1 MB',
          415: 'not sent as JSON',
          503: 'the hub JWKS cannot be fetched',
        },
      },
      async ({ req, params }) => {
        // app.ts reads this body raw: the signature covers the exact bytes.
        if (!Buffer.isBuffer(req.body)) {
          throw new AppError(
            415,
            'tipo_de_conteudo_invalido',
            'deliveries are JSON sent with Content-Type: application/json',
          );
        }
        await service.receber(req.headers, req.body, params.assinatura_id);
      },
    )
    .route(
      {
        method: 'get',
        path: '/recebidos',
        summary: 'The last 100 verified deliveries, newest first (each webhook-id once)',
        tag,
        authenticated: false,
        response: z.array(recebidoSchema),
      },
      () => service.listar(),
    );
}
