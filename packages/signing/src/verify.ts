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
  /** How far the timestamp may be from now, either way: finite, 0 or more. Default 300 s. */
  toleranceSeconds?: number;
  /** Unix seconds of "now", for tests. */
  now?: number;
  /** The subscription the delivery must name in `assinatura_id` (or one of several); required unless acceptAnySubscription. */
  expectedSubscription?: string | readonly string[];
  /** true to check the signature alone (the hub's own tests, whose bodies name no subscription). */
  acceptAnySubscription?: boolean;
  /** Bodies larger than this are refused before any signature is checked. Default 2 MiB. */
  maxBodyBytes?: number;
}

/**
 * verifyWithKeys with "now" in unix seconds: throws a WebhookVerificationError (its `code` says
 * why; `unknown_key` means fetch the JWKS again and retry once), or a TypeError for bad options.
 * One mechanism: every check is @hub/webhook-verifier's.
 */
export function verifyWebhook(
  headers: HeaderSource,
  body: RawBody,
  jwks: Jwks,
  options: VerifyOptions = {},
): VerifiedWebhook {
  const { now, ...rest } = options;
  return verifyWithKeys(headers, body, jwks, { ...rest, now: now === undefined ? undefined : () => now * 1000 });
}
