import { AppError } from '@hub/http';
import type { Logger } from '@hub/log';
import {
  type HeaderSource,
  type Jwks,
  type VerifiedWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from '@hub/signing/verify';
import type { JwksProvider } from '../../jwks';
import type { Recebido, RecebidosStore } from './recebidos.store';

export interface WebhooksDeps {
  jwks: JwksProvider;
  store: RecebidosStore;
  logger: Logger;
  /** How far webhook-timestamp may be from now. Default 300 s (Standard Webhooks). */
  toleranceSeconds?: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** What a subscriber does with a delivery: verify it against the hub's JWKS, then take it once. */
export function webhooksService(deps: WebhooksDeps) {
  const options = { toleranceSeconds: deps.toleranceSeconds ?? 300 };

  const verify = async (headers: HeaderSource, body: Uint8Array): Promise<VerifiedWebhook> => {
    let jwks: Jwks;
    try {
      jwks = await deps.jwks.current();
    } catch (error) {
      deps.logger.error({ err: error }, 'the hub JWKS is unavailable; deliveries cannot be verified');
      // Not the sender's fault: a 503 makes the hub try again later.
      throw new AppError(503, 'jwks_indisponivel', 'the public keys of the hub cannot be fetched now', undefined, {
        'retry-after': '30',
      });
    }
    try {
      return verifyWebhook(headers, body, jwks, options);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError) || error.reason !== 'no_usable_key') throw refused(error);
    }
    // A key this receiver has not seen yet, e.g. just added by a rotation: fetch the JWKS again (rate limited).
    const fresh = await deps.jwks.refetchForUnknownKey();
    if (!fresh) throw refused(new WebhookVerificationError('no_usable_key', 'unknown key'));
    try {
      return verifyWebhook(headers, body, fresh, options);
    } catch (error) {
      throw refused(error);
    }
  };

  return {
    /** Verifies and keeps a delivery; `novo` is false for a repeat of a webhook-id already taken. */
    async receber(headers: HeaderSource, body: Uint8Array): Promise<{ novo: boolean; recebido: Recebido }> {
      const verified = await verify(headers, body);
      let corpo: unknown;
      try {
        corpo = JSON.parse(decoder.decode(body));
      } catch {
        throw new AppError(400, 'json_invalido', 'the signature is valid but the body is not JSON');
      }
      const recebido: Recebido = {
        webhook_id: verified.id,
        assinado_em: new Date(verified.timestamp * 1000).toISOString(),
        recebido_em: new Date().toISOString(),
        chave_id: verified.kid ?? null,
        corpo,
      };
      const novo = deps.store.add(recebido);
      const tipo = (corpo as { tipo?: unknown } | null)?.tipo;
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

function refused(error: unknown): Error {
  if (!(error instanceof WebhookVerificationError)) return error as Error;
  // By now the JWKS was fetched again (or was fetched less than 30 s ago), so the verifier's advice to refetch is moot.
  const why = error.reason === 'no_usable_key' ? 'no key named in webhook-key-id is in the hub JWKS' : error.message;
  return new AppError(401, 'assinatura_invalida', `the delivery was refused (${error.reason}): ${why}`);
}
