/** The stable codes of a refused delivery, one per error class below. */
export type VerificationErrorCode =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'no_signature'
  | 'invalid_signature'
  | 'unknown_key'
  | 'invalid_payload'
  | 'payload_too_large'
  | 'subscription_mismatch';

/**
 * A delivery that must be refused: the sender is at fault or is not the hub, so answer 4xx (401 for
 * all but `invalid_payload`, 400, and `payload_too_large`, 413). Every subclass has its own `code`.
 */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';

  constructor(
    readonly code: VerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** webhook-id, webhook-timestamp or webhook-signature is absent or empty. */
export class MissingHeaderError extends WebhookVerificationError {
  override name = 'MissingHeaderError';
  constructor(message = 'webhook-id, webhook-timestamp and webhook-signature are required') {
    super('missing_header', message);
  }
}

/** webhook-timestamp is not whole unix seconds. */
export class InvalidTimestampError extends WebhookVerificationError {
  override name = 'InvalidTimestampError';
  constructor(message = 'webhook-timestamp is not unix seconds') {
    super('invalid_timestamp', message);
  }
}

/** webhook-timestamp is further in the past than the tolerance (a replay, or a clock far behind). */
export class TimestampTooOldError extends WebhookVerificationError {
  override name = 'TimestampTooOldError';
  constructor(message = 'the webhook timestamp is too old') {
    super('timestamp_too_old', message);
  }
}

/** webhook-timestamp is further in the future than the tolerance. */
export class TimestampInFutureError extends WebhookVerificationError {
  override name = 'TimestampInFutureError';
  constructor(message = 'the webhook timestamp is in the future') {
    super('timestamp_in_future', message);
  }
}

/** webhook-signature holds no well-formed `v1a` entry (e.g. only symmetric `v1` ones). */
export class NoSignatureError extends WebhookVerificationError {
  override name = 'NoSignatureError';
  constructor(message = 'webhook-signature carries no v1a signature') {
    super('no_signature', message);
  }
}

/** No `v1a` signature verifies with any trusted key: the body, id or timestamp changed, or a forgery. */
export class InvalidSignatureError extends WebhookVerificationError {
  override name = 'InvalidSignatureError';
  constructor(message = 'no signature matches a key of the JWKS') {
    super('invalid_signature', message);
  }
}

/** Nothing verified and webhook-key-id names a key the JWKS does not hold (even after a refetch). */
export class UnknownKeyError extends WebhookVerificationError {
  override name = 'UnknownKeyError';
  constructor(message = 'no key named in webhook-key-id is in the JWKS') {
    super('unknown_key', message);
  }
}

/** The signature is valid but the body is not UTF-8 JSON. */
export class InvalidPayloadError extends WebhookVerificationError {
  override name = 'InvalidPayloadError';
  constructor(message = 'the signature is valid but the body is not JSON') {
    super('invalid_payload', message);
  }
}

/** The body is larger than `maxBodyBytes`: refused before any signature is checked. */
export class PayloadTooLargeError extends WebhookVerificationError {
  override name = 'PayloadTooLargeError';
  constructor(message = 'the webhook body is larger than maxBodyBytes') {
    super('payload_too_large', message);
  }
}

/**
 * The delivery is genuine but its body's `assinatura_id` is not the subscription expected (or is
 * absent): a delivery meant for another subscriber, replayed here.
 */
export class SubscriptionMismatchError extends WebhookVerificationError {
  override name = 'SubscriptionMismatchError';
  constructor(message = 'the delivery is for another subscription') {
    super('subscription_mismatch', message);
  }
}

/**
 * The JWKS could not be fetched and no keys are cached. Not the sender's fault, so it is not a
 * WebhookVerificationError: answer 503 and the hub tries again later.
 */
export class JwksUnavailableError extends Error {
  override name = 'JwksUnavailableError';
  readonly code = 'jwks_unavailable';
}
