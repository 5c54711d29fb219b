// The portable verifier for subscribers: tweetnacl only, no node:crypto and no Buffer, so it runs in
// Node, browsers, Deno, Bun and edge runtimes. Import it alone with `@hub/signing/verify`.
import nacl from 'tweetnacl';
import { decodeBase64 } from './base64';
import { SIGNATURE_VERSION, WEBHOOK_ID, WEBHOOK_KEY_ID, WEBHOOK_SIGNATURE, WEBHOOK_TIMESTAMP } from './headers';

/** One public key as GET /.well-known/jwks.json serves it. */
export interface PublicJwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
  use?: string;
  alg?: string;
}

export interface Jwks {
  keys: PublicJwk[];
}

export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export type VerificationFailure =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'no_signature'
  | 'no_usable_key'
  | 'invalid_signature';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';

  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifyOptions {
  /** How far the timestamp may be from now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** Unix seconds of "now", for tests. */
  now?: number;
}

export interface VerifiedWebhook {
  id: string;
  timestamp: number;
  /** The key whose signature matched. */
  kid: string | undefined;
}

const MAX_SIGNATURES = 10;
const encoder = new TextEncoder();

/**
 * Verifies a delivery of the hub: the timestamp within tolerance, then any `v1a` signature of
 * `{id}.{timestamp}.{body}` made by a key of the JWKS (the JWKS is the only trust anchor; the
 * `webhook-key-id` header only says which key to try first). `body` must be the raw bytes or text
 * received, before any JSON parsing. Throws WebhookVerificationError; when it reports
 * `no_usable_key`, fetch the JWKS again (a new key may have been added) and retry once.
 */
export function verifyWebhook(
  headers: HeaderSource,
  body: string | Uint8Array,
  jwks: Jwks,
  options: VerifyOptions = {},
): VerifiedWebhook {
  const id = header(headers, WEBHOOK_ID);
  const timestampText = header(headers, WEBHOOK_TIMESTAMP);
  const signatureText = header(headers, WEBHOOK_SIGNATURE);
  if (!id || !timestampText || !signatureText) {
    throw new WebhookVerificationError(
      'missing_header',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  }
  if (!/^\d{1,15}$/.test(timestampText))
    throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not unix seconds');
  const timestamp = Number(timestampText);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (timestamp < now - tolerance)
    throw new WebhookVerificationError('timestamp_too_old', 'the webhook timestamp is too old');
  if (timestamp > now + tolerance)
    throw new WebhookVerificationError('timestamp_in_future', 'the webhook timestamp is in the future');

  const signatures = signatureText
    .split(' ')
    .filter(Boolean)
    .slice(0, MAX_SIGNATURES)
    .map((entry) => {
      const [version, value] = entry.split(',', 2);
      return version === SIGNATURE_VERSION && value ? decodeBase64(value) : undefined;
    });
  if (!signatures.some((s) => s?.length === nacl.sign.signatureLength)) {
    throw new WebhookVerificationError('no_signature', 'webhook-signature carries no v1a signature');
  }
  const keys = usableKeys(jwks);
  if (keys.length === 0) throw new WebhookVerificationError('no_usable_key', 'the JWKS has no Ed25519 signing key');

  const hintedKids = (header(headers, WEBHOOK_KEY_ID) ?? '').split(' ').filter(Boolean);
  const message = concat(encoder.encode(`${id}.${timestamp}.`), typeof body === 'string' ? encoder.encode(body) : body);
  let sawKnownKid = hintedKids.length === 0;
  for (const [index, signature] of signatures.entries()) {
    if (signature?.length !== nacl.sign.signatureLength) continue;
    const hinted = hintedKids[index];
    // The hinted key first; without a (known) hint, every key of the JWKS.
    const hintedKey = hinted ? keys.find((k) => k.kid === hinted) : undefined;
    if (hintedKey) sawKnownKid = true;
    const candidates = hintedKey ? [hintedKey] : keys;
    for (const key of candidates) {
      if (nacl.sign.detached.verify(message, signature, key.publicKey)) return { id, timestamp, kid: key.kid };
    }
  }
  if (!sawKnownKid) {
    throw new WebhookVerificationError(
      'no_usable_key',
      'no key named in webhook-key-id is in the JWKS; fetch the JWKS again',
    );
  }
  throw new WebhookVerificationError('invalid_signature', 'no signature matches a key of the JWKS');
}

interface UsableKey {
  kid: string | undefined;
  publicKey: Uint8Array;
}

function usableKeys(jwks: Jwks): UsableKey[] {
  const keys: UsableKey[] = [];
  for (const jwk of jwks?.keys ?? []) {
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || !jwk.x) continue;
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    if (jwk.alg !== undefined && jwk.alg !== 'EdDSA' && jwk.alg !== 'Ed25519') continue;
    const publicKey = decodeBase64(jwk.x);
    if (publicKey?.length === nacl.sign.publicKeyLength) keys.push({ kid: jwk.kid, publicKey });
  }
  return keys;
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
