export {
  InvalidPayloadError,
  InvalidSignatureError,
  InvalidTimestampError,
  JwksUnavailableError,
  MissingHeaderError,
  NoSignatureError,
  PayloadTooLargeError,
  SubscriptionMismatchError,
  TimestampInFutureError,
  TimestampTooOldError,
  UnknownKeyError,
  type VerificationErrorCode,
  WebhookVerificationError,
} from './errors.js';
export {
  type HeaderSource,
  SIGNATURE_VERSION,
  WEBHOOK_ID,
  WEBHOOK_KEY_ID,
  WEBHOOK_SIGNATURE,
  WEBHOOK_TIMESTAMP,
} from './headers.js';
export type { Jwk, Jwks } from './keys.js';
export { assinaturaNomeada, type EntregaCloudEvents } from './payload.js';
export {
  createVerifier,
  type FetchLike,
  type VerifiedDelivery,
  type VerifierOptions,
  type VerifyCallOptions,
  type WebhookVerifier,
} from './verifier.js';
export {
  DEFAULT_MAX_BODY_BYTES,
  type RawBody,
  type VerifiedSignature,
  type VerifyOptions,
  verifyWithKeys,
} from './verify.js';
