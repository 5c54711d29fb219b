import { AppError } from '@hub/http';
import type { Logger } from '@hub/log';
import {
  type HeaderSource,
  JwksUnavailableError,
  type VerifiedDelivery,
  WebhookVerificationError,
  type WebhookVerifier,
} from '@hub/webhook-verifier';
import type { Recebido, RecebidosStore } from './recebidos.store';

export interface WebhooksDeps {
  /** createVerifier of @hub/webhook-verifier, bound to the hub's JWKS. */
  verifier: WebhookVerifier;
  store: RecebidosStore;
  logger: Logger;
}

/** What a subscriber does with a delivery: verify it against the hub's JWKS, then take it once. */
export function webhooksService(deps: WebhooksDeps) {
  const verify = async (headers: HeaderSource, body: Uint8Array, assinaturaId: string): Promise<VerifiedDelivery> => {
    try {
      // Bound to the subscription of the URL: a delivery captured at another subscriber is refused.
      return await deps.verifier.verifyDelivery(headers, body, { expectedSubscription: assinaturaId });
    } catch (error) {
      if (error instanceof JwksUnavailableError) {
        deps.logger.error({ err: error }, 'the hub JWKS is unavailable; deliveries cannot be verified');
        // Not the sender's fault: a 503 makes the hub try again later.
        throw new AppError(503, 'jwks_indisponivel', 'the public keys of the hub cannot be fetched now', undefined, {
          'retry-after': '30',
        });
      }
      if (!(error instanceof WebhookVerificationError)) throw error;
      if (error.code === 'invalid_payload') {
        throw new AppError(400, 'json_invalido', 'the signature is valid but the body is not JSON');
      }
      if (error.code === 'payload_too_large') {
        throw new AppError(413, 'corpo_grande_demais', error.message);
      }
      throw new AppError(401, 'assinatura_invalida', `the delivery was refused (${error.code}): ${error.message}`);
    }
  };

  return {
    /**
     * Verifies and keeps a delivery for the subscription `assinaturaId`; `novo` is false for a
     * repeat of a webhook-id already taken.
     */
    async receber(
      headers: HeaderSource,
      body: Uint8Array,
      assinaturaId: string,
    ): Promise<{ novo: boolean; recebido: Recebido }> {
      const verified = await verify(headers, body, assinaturaId);
      const recebido: Recebido = {
        webhook_id: verified.id,
        assinado_em: new Date(verified.timestamp * 1000).toISOString(),
        recebido_em: new Date().toISOString(),
        chave_id: verified.kid ?? null,
        corpo: verified.payload,
      };
      const novo = deps.store.add(recebido);
      const tipo = (verified.payload as { tipo?: unknown } | null)?.tipo;
      deps.logger.info(
        {
          webhook_id: verified.id,
          chave_id: verified.kid,
          tipo: typeof tipo === 'string' ? tipo : undefined,
          repetido: !novo,
        },
        novo ? 'delivery verified and kept' : 'repeated delivery acknowledged, not kept again',
      );
      return { novo, recebido };
    },
    listar: (): Recebido[] => deps.store.list(),
  };
}

export type WebhooksService = ReturnType<typeof webhooksService>;
