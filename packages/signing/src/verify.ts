// The subscriber's verifier is its own publishable package, @hub/webhook-verifier (tweetnacl only,
// any JS runtime). This entry re-exports it for the workspace, plus the synchronous
// verifyWebhook(headers, body, jwks) that the hub's own tests use with a JWKS in hand.
import {
  type HeaderSource,
  type Jwk,
  type Jwks,
  type RawBody,
  type VerificationErrorCode,
  type VerifiedSignature,
  verifyWithKeys,
} from '@hub/webhook-verifier';

export * from '@hub/webhook-verifier';

/** One public key as GET /.well-known/jwks.json serves it. */
export type PublicJwk = Jwk;
export type VerificationFailure = VerificationErrorCode;
export type VerifiedWebhook = VerifiedSignature;

export interface VerifyOptions {
  /** How far the timestamp may be from now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** Unix seconds of "now", for tests. */
  now?: number;
}

/**
 * verifyWithKeys with "now" in unix seconds: throws a WebhookVerificationError (its `code` says
 * why; `unknown_key` means fetch the JWKS again and retry once).
 */
export function verifyWebhook(
  headers: HeaderSource,
  body: RawBody,
  jwks: Jwks,
  options: VerifyOptions = {},
): VerifiedWebhook {
  const { now } = options;
  return verifyWithKeys(headers, body, jwks, {
    toleranceSeconds: options.toleranceSeconds,
    now: now === undefined ? undefined : () => now * 1000,
  });
}
