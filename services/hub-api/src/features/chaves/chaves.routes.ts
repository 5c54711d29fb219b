import { ApiRouter } from '@hub/http';
import type { KeyStore } from '@hub/signing';
import { z } from 'zod';

const jwks = z.object({
  keys: z.array(
    z.object({
      kty: z.literal('OKP'),
      crv: z.literal('Ed25519'),
      x: z.string(),
      kid: z.string(),
      use: z.literal('sig'),
      alg: z.literal('EdDSA'),
    }),
  ),
});

/**
 * GET /.well-known/jwks.json: the public keys that verify the hub's deliveries (active and
 * retired ones; never a private member). Public, cached for 5 minutes.
 */
export function chavesRoutes(keys: Pick<KeyStore, 'jwks'>): ApiRouter {
  return new ApiRouter().route(
    {
      method: 'get',
      path: '/.well-known/jwks.json',
      operationId: 'obterChavesPublicas',
      summary: 'Public keys (JWKS) of the Ed25519 keys that sign deliveries',
      tag: 'Chave de assinatura',
      authenticated: false,
      response: jwks,
    },
    async ({ res }) => {
      res.set('cache-control', 'public, max-age=300');
      return keys.jwks();
    },
  );
}
