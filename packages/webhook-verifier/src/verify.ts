import nacl from 'tweetnacl';
import { decodeBase64 } from './base64.js';
import {
  InvalidPayloadError,
  InvalidSignatureError,
  InvalidTimestampError,
  MissingHeaderError,
  NoSignatureError,
  PayloadTooLargeError,
  SubscriptionMismatchError,
  TimestampInFutureError,
  TimestampTooOldError,
  UnknownKeyError,
} from './errors.js';
import {
  type HeaderSource,
  readHeader,
  SIGNATURE_VERSION,
  WEBHOOK_ID,
  WEBHOOK_KEY_ID,
  WEBHOOK_SIGNATURE,
  WEBHOOK_TIMESTAMP,
} from './headers.js';
import { type Jwk, type Jwks, type TrustedKey, trustedKeys } from './keys.js';
import { assinaturaNomeada } from './payload.js';

/** The body exactly as received, before any JSON parsing. */
export type RawBody = string | Uint8Array | ArrayBuffer;

export interface VerifyOptions {
  /** How far webhook-timestamp may be from now, either way: a finite number ≥ 0. Default 300 s (Standard Webhooks). */
  toleranceSeconds?: number;
  /** Milliseconds since the epoch, like Date.now (the default); for tests. */
  now?: () => number;
  /**
   * The subscription (its id, or the ids of several) this receiver serves: a genuine delivery whose
   * body names another in `assinatura_id`, or none, is refused with SubscriptionMismatchError, so a
   * delivery captured at another subscriber cannot be replayed here.
   */
  expectedSubscription?: string | readonly string[];
  /**
   * true to verify the signature alone, whatever subscription the body names: a delivery captured
   * at another subscriber then verifies here too. Only for a receiver that checks `assinatura_id`
   * itself. Without it, expectedSubscription is required (a TypeError otherwise).
   */
  acceptAnySubscription?: boolean;
  /** Bodies larger than this are refused before any signature is checked. Default 2 MiB. */
  maxBodyBytes?: number;
}

/** A delivery whose signature verified. */
export interface VerifiedSignature {
  /** webhook-id: the same on every retry of a delivery, so repeats can be dropped. */
  id: string;
  /** webhook-timestamp, unix seconds. */
  timestamp: number;
  /** The kid of the JWKS key whose signature matched. */
  kid: string | undefined;
}

/** A delivery's headers checked for form and time, ready to be matched against keys. */
export interface SignedDelivery {
  id: string;
  timestamp: number;
  /** Decoded `v1a` signatures with the kid webhook-key-id gives at the same position. */
  signatures: { signature: Uint8Array; hint: string | undefined }[];
  /** The body's bytes, read once. */
  body: Uint8Array;
  /** The signed bytes: `{id}.{timestamp}.{body}`. */
  content: Uint8Array;
}

/** Entries of webhook-signature read at all; a rotation needs two. */
const MAX_SIGNATURES = 10;
/**
 * Signature checks one delivery may cost beyond one per trusted key. Ed25519 hashes the signature's
 * R and the public key together with the message, so nothing can be hashed once for every try: each
 * try is a pass over the whole body. The hub names each signature's key, so it needs one try.
 */
const EXTRA_TRIES = 2;
const DEFAULT_TOLERANCE_SECONDS = 300;
/** Twice what the hub accepts in a publication (1 MB), the delivery's envelope included. */
export const DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;
/** A 64-byte signature in base64, padded or not. */
const MAX_SIGNATURE_TEXT = 88;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Refuses options that would weaken a check (a tolerance of NaN or Infinity turns the timestamp
 * check off) with a TypeError, at construction rather than at the first delivery.
 */
export function checkVerifyOptions(options: VerifyOptions): void {
  const { toleranceSeconds, maxBodyBytes, expectedSubscription, acceptAnySubscription, now } = options;
  if (toleranceSeconds !== undefined && !(Number.isFinite(toleranceSeconds) && toleranceSeconds >= 0))
    throw new TypeError(`toleranceSeconds must be a finite number of seconds, 0 or more; got ${toleranceSeconds}`);
  if (maxBodyBytes !== undefined && !(Number.isSafeInteger(maxBodyBytes) && maxBodyBytes > 0))
    throw new TypeError(`maxBodyBytes must be a whole number of bytes above 0; got ${maxBodyBytes}`);
  if (now !== undefined && typeof now !== 'function') throw new TypeError('now must be a function like Date.now');
  if (expectedSubscription !== undefined) {
    const ids = typeof expectedSubscription === 'string' ? [expectedSubscription] : expectedSubscription;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id.length > 0))
      throw new TypeError('expectedSubscription must be a subscription id, or a non-empty list of them');
  }
  if (acceptAnySubscription !== undefined && typeof acceptAnySubscription !== 'boolean')
    throw new TypeError(`acceptAnySubscription must be true or false; got ${acceptAnySubscription}`);
  if (acceptAnySubscription === true && expectedSubscription !== undefined)
    throw new TypeError('give expectedSubscription or acceptAnySubscription: true, not both');
}

/**
 * The subscription a delivery must name, required unless the caller opted out: one key set signs
 * every subscriber's deliveries, so a verifier that checks the signature alone accepts a delivery
 * captured at another subscriber. Undefined only with acceptAnySubscription: true.
 */
export function requiredSubscription(
  expected: string | readonly string[] | undefined,
  acceptAnySubscription: boolean | undefined,
): string | readonly string[] | undefined {
  if (expected !== undefined || acceptAnySubscription === true) return expected;
  throw new TypeError(
    'expectedSubscription is required: pass the id of the subscription this receiver serves ' +
      '(to createVerifier, or per call), or acceptAnySubscription: true to check the signature alone ' +
      '(a delivery captured at another subscriber then verifies here)',
  );
}

/**
 * Verifies a delivery against keys the caller already holds (a JWKS, or its `keys`): headers
 * present, body within maxBodyBytes, timestamp within tolerance, then any `v1a` signature of
 * `{id}.{timestamp}.{body}` made by one of those keys, then the subscription the body names
 * (expectedSubscription; required unless acceptAnySubscription is true). The keys are the only trust anchor; webhook-key-id says which key
 * checks which signature. Throws a WebhookVerificationError; an UnknownKeyError means the keys may
 * be stale (fetch the JWKS again, at most now and then, and retry once). createVerifier does that
 * for you. Bad options throw a TypeError.
 */
export function verifyWithKeys(
  headers: HeaderSource,
  rawBody: RawBody,
  keys: Jwks | readonly Jwk[],
  options: VerifyOptions = {},
): VerifiedSignature {
  checkVerifyOptions(options);
  const expected = requiredSubscription(options.expectedSubscription, options.acceptAnySubscription);
  const delivery = parseSignedDelivery(headers, rawBody, options);
  const verified = matchSignature(delivery, trustedKeys(keys));
  if (expected !== undefined) readPayload(delivery, expected);
  return verified;
}

/** Headers, body size and time, before any key is needed: a malformed or replayed request costs little. */
export function parseSignedDelivery(headers: HeaderSource, rawBody: RawBody, options: VerifyOptions): SignedDelivery {
  const id = readHeader(headers, WEBHOOK_ID);
  const timestampText = readHeader(headers, WEBHOOK_TIMESTAMP);
  const signatureText = readHeader(headers, WEBHOOK_SIGNATURE);
  if (!id || !timestampText || !signatureText) throw new MissingHeaderError();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // A string's length in UTF-16 units is at most its UTF-8 size: a body refused here is never encoded.
  if (byteLengthAtLeast(rawBody) > maxBodyBytes) throw new PayloadTooLargeError();
  if (!/^\d{1,15}$/.test(timestampText)) throw new InvalidTimestampError();
  const timestamp = Number(timestampText);
  const nowMs = (options.now ?? Date.now)();
  if (!Number.isFinite(nowMs)) throw new TypeError(`now() must give milliseconds since the epoch; got ${nowMs}`);
  const now = Math.floor(nowMs / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (timestamp < now - tolerance) throw new TimestampTooOldError();
  if (timestamp > now + tolerance) throw new TimestampInFutureError();

  const hints = (readHeader(headers, WEBHOOK_KEY_ID) ?? '').split(' ').filter(Boolean);
  const signatures: SignedDelivery['signatures'] = [];
  for (const [index, entry] of signatureText.split(' ').filter(Boolean).slice(0, MAX_SIGNATURES).entries()) {
    const [version, value] = entry.split(',', 2);
    if (version !== SIGNATURE_VERSION || !value || value.length > MAX_SIGNATURE_TEXT) continue;
    const signature = decodeBase64(value);
    if (signature && signature.length === nacl.sign.signatureLength) signatures.push({ signature, hint: hints[index] });
  }
  if (signatures.length === 0) throw new NoSignatureError();
  const body = bytesOf(rawBody);
  if (body.length > maxBodyBytes) throw new PayloadTooLargeError();
  return { id, timestamp, signatures, body, content: concat(encoder.encode(`${id}.${timestamp}.`), body) };
}

/**
 * Valid when a signature verifies with a trusted key. A signature whose webhook-key-id names a
 * trusted key is checked with that key only, each key once; signatures naming no known key are then
 * checked with every key. At most one check per key plus EXTRA_TRIES are made, however many
 * signatures the request carries: each check hashes the whole body. When none verifies and a named
 * kid is not among the keys (or there are no keys), the keys may be older than the signer's:
 * UnknownKeyError. Otherwise InvalidSignatureError.
 */
export function matchSignature(delivery: SignedDelivery, keys: readonly TrustedKey[]): VerifiedSignature {
  let tries = keys.length + EXTRA_TRIES;
  let unknownHint = keys.length === 0;
  const verified = (signature: Uint8Array, key: TrustedKey): VerifiedSignature | undefined => {
    tries -= 1;
    return nacl.sign.detached.verify(delivery.content, signature, key.publicKey)
      ? { id: delivery.id, timestamp: delivery.timestamp, kid: key.kid }
      : undefined;
  };
  const checked = new Set<TrustedKey>();
  const unnamed: Uint8Array[] = [];
  for (const { signature, hint } of delivery.signatures) {
    const named = hint === undefined ? undefined : keys.find((k) => k.kid === hint);
    if (!named) {
      if (hint !== undefined) unknownHint = true;
      unnamed.push(signature);
    } else if (!checked.has(named) && tries > 0) {
      checked.add(named);
      const match = verified(signature, named);
      if (match) return match;
    }
  }
  for (const signature of unnamed) {
    for (const key of keys) {
      if (tries <= 0) break;
      const match = verified(signature, key);
      if (match) return match;
    }
  }
  if (unknownHint) throw new UnknownKeyError();
  throw new InvalidSignatureError();
}

/**
 * The verified body, parsed once; with `expected`, refused unless its `assinatura_id` is that
 * subscription (or one of them).
 */
export function readPayload<T>(delivery: SignedDelivery, expected?: string | readonly string[]): T {
  let payload: unknown;
  try {
    payload = JSON.parse(decoder.decode(delivery.body));
  } catch {
    throw new InvalidPayloadError();
  }
  if (expected !== undefined) {
    const named = assinaturaNomeada(payload);
    const ids: readonly string[] = typeof expected === 'string' ? [expected] : expected;
    if (typeof named !== 'string')
      throw new SubscriptionMismatchError(
        `the delivery names no subscription (no assinatura_id, nor assinaturaid in a CloudEvent); expected ${ids.join(' or ')}`,
      );
    if (!ids.includes(named))
      throw new SubscriptionMismatchError(
        `the delivery is for subscription ${named.slice(0, 64)}, not ${ids.join(' or ')}: refused as a replay`,
      );
  }
  return payload as T;
}

/** A lower bound of the body's size in bytes, without encoding it. */
function byteLengthAtLeast(body: RawBody): number {
  return typeof body === 'string' ? body.length : body.byteLength;
}

export function bytesOf(body: RawBody): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  // A view from another realm (or a Buffer) becomes a Uint8Array of this one, which tweetnacl insists on.
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return new Uint8Array(body);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
