import nacl from 'tweetnacl';
import { decodeBase64 } from './base64.js';
import {
  InvalidSignatureError,
  InvalidTimestampError,
  MissingHeaderError,
  NoSignatureError,
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

/** The body exactly as received, before any JSON parsing. */
export type RawBody = string | Uint8Array | ArrayBuffer;

export interface VerifyOptions {
  /** How far webhook-timestamp may be from now, either way. Default 300 s (Standard Webhooks). */
  toleranceSeconds?: number;
  /** Milliseconds since the epoch, like Date.now (the default); for tests. */
  now?: () => number;
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
  /** The signed bytes: `{id}.{timestamp}.{body}`. */
  content: Uint8Array;
}

/** More entries than any rotation needs only cost verification time, so the rest are ignored. */
const MAX_SIGNATURES = 10;
const DEFAULT_TOLERANCE_SECONDS = 300;
const encoder = new TextEncoder();

/**
 * Verifies a delivery against keys the caller already holds (a JWKS, or its `keys`): headers
 * present, timestamp within tolerance, then any `v1a` signature of `{id}.{timestamp}.{body}` made by
 * one of those keys. The keys are the only trust anchor; webhook-key-id only says which to try
 * first. Throws a WebhookVerificationError; an UnknownKeyError means the keys may be stale (fetch
 * the JWKS again, at most now and then, and retry once). createVerifier does that for you.
 */
export function verifyWithKeys(
  headers: HeaderSource,
  rawBody: RawBody,
  keys: Jwks | readonly Jwk[],
  options: VerifyOptions = {},
): VerifiedSignature {
  return matchSignature(parseSignedDelivery(headers, rawBody, options), trustedKeys(keys));
}

export function parseSignedDelivery(headers: HeaderSource, rawBody: RawBody, options: VerifyOptions): SignedDelivery {
  const id = readHeader(headers, WEBHOOK_ID);
  const timestampText = readHeader(headers, WEBHOOK_TIMESTAMP);
  const signatureText = readHeader(headers, WEBHOOK_SIGNATURE);
  if (!id || !timestampText || !signatureText) throw new MissingHeaderError();
  if (!/^\d{1,15}$/.test(timestampText)) throw new InvalidTimestampError();
  const timestamp = Number(timestampText);
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (timestamp < now - tolerance) throw new TimestampTooOldError();
  if (timestamp > now + tolerance) throw new TimestampInFutureError();

  const hints = (readHeader(headers, WEBHOOK_KEY_ID) ?? '').split(' ').filter(Boolean);
  const signatures: SignedDelivery['signatures'] = [];
  for (const [index, entry] of signatureText.split(' ').filter(Boolean).slice(0, MAX_SIGNATURES).entries()) {
    const [version, value] = entry.split(',', 2);
    const signature = version === SIGNATURE_VERSION && value ? decodeBase64(value) : undefined;
    if (signature && signature.length === nacl.sign.signatureLength) signatures.push({ signature, hint: hints[index] });
  }
  if (signatures.length === 0) throw new NoSignatureError();
  return { id, timestamp, signatures, content: concat(encoder.encode(`${id}.${timestamp}.`), bytesOf(rawBody)) };
}

/**
 * Valid when any signature verifies with any trusted key, the hinted key tried first. When none
 * does and a hinted kid is not among the keys (or there are no keys), the keys may be older than
 * the signer's: UnknownKeyError. Otherwise InvalidSignatureError.
 */
export function matchSignature(delivery: SignedDelivery, keys: readonly TrustedKey[]): VerifiedSignature {
  let unknownHint = keys.length === 0;
  for (const { signature, hint } of delivery.signatures) {
    const hinted = hint === undefined ? undefined : keys.find((k) => k.kid === hint);
    if (hint !== undefined && !hinted) unknownHint = true;
    const candidates = hinted ? [hinted, ...keys.filter((k) => k !== hinted)] : keys;
    for (const key of candidates) {
      if (nacl.sign.detached.verify(delivery.content, signature, key.publicKey)) {
        return { id: delivery.id, timestamp: delivery.timestamp, kid: key.kid };
      }
    }
  }
  if (unknownHint) throw new UnknownKeyError();
  throw new InvalidSignatureError();
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
