import { createHash, createPrivateKey, generateKeyPairSync } from 'node:crypto';
import nacl from 'tweetnacl';
import type { Signer } from './sign';
import type { PublicJwk } from './verify';

/**
 * The hub's signing keys. A key is `active` (signs every delivery and is published) or `retired`
 * (published in the JWKS, signs nothing). Rotation: add a key (both sign: the overlap), wait until
 * every subscriber has fetched the new JWKS, retire the old key, later remove it. See docs/keys.md.
 */
export type KeyState = 'active' | 'retired';

export interface PrivateEd25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  d: string;
}

export interface StoredKey {
  kid: string;
  state: KeyState;
  created_at: string;
  retired_at?: string;
  private_jwk: PrivateEd25519Jwk;
}

export interface KeySet {
  keys: StoredKey[];
}

export class KeySetError extends Error {
  override name = 'KeySetError';
}

/** RFC 7638 thumbprint of an Ed25519 public key: the `kid`. */
export function thumbprint(x: string): string {
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
}

/** A fresh Ed25519 key, active. */
export function generateKey(now = new Date()): StoredKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  if (!jwk.x || !jwk.d) throw new KeySetError('node:crypto exported an incomplete Ed25519 key');
  return {
    kid: thumbprint(jwk.x),
    state: 'active',
    created_at: now.toISOString(),
    private_jwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d },
  };
}

/** Parses and checks a key set (the key file or HUB_SIGNING_KEYS). `source` names it in errors. */
export function parseKeySet(text: string, source: string): KeySet {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new KeySetError(`${source} is not valid JSON`);
  }
  const keys = (raw as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new KeySetError(`${source} must be an object with a "keys" list`);
  const parsed = keys.map((key, index) => parseKey(key, `${source} keys[${index}]`));
  const kids = new Set(parsed.map((k) => k.kid));
  if (kids.size !== parsed.length) throw new KeySetError(`${source} lists the same key twice`);
  if (!parsed.some((k) => k.state === 'active'))
    throw new KeySetError(`${source} has no active key; deliveries could not be signed`);
  return { keys: parsed };
}

function parseKey(value: unknown, where: string): StoredKey {
  const key = value as Partial<StoredKey> | null;
  const jwk = key?.private_jwk as Partial<PrivateEd25519Jwk> | undefined;
  if (!key || typeof key !== 'object') throw new KeySetError(`${where} is not an object`);
  if (key.state !== 'active' && key.state !== 'retired')
    throw new KeySetError(`${where}.state must be "active" or "retired"`);
  if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || typeof jwk.d !== 'string') {
    throw new KeySetError(`${where}.private_jwk must be an Ed25519 private JWK (kty OKP, crv Ed25519, x, d)`);
  }
  // The public half derived from the seed alone (Node 24 refuses a JWK whose x and d disagree before
  // anything can be compared, which would hide which of the two errors it is).
  const seed = Buffer.from(jwk.d, 'base64url');
  if (seed.length !== nacl.sign.seedLength) throw new KeySetError(`${where}.private_jwk is not a usable Ed25519 key`);
  const derivedX = Buffer.from(nacl.sign.keyPair.fromSeed(seed).publicKey).toString('base64url');
  if (derivedX !== jwk.x) throw new KeySetError(`${where}.private_jwk: x does not belong to d`);
  const kid = thumbprint(jwk.x);
  if (key.kid !== undefined && key.kid !== kid) throw new KeySetError(`${where}.kid is not the thumbprint of its key`);
  return {
    kid,
    state: key.state,
    created_at: typeof key.created_at === 'string' ? key.created_at : new Date(0).toISOString(),
    ...(typeof key.retired_at === 'string' ? { retired_at: key.retired_at } : {}),
    private_jwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d },
  };
}

/** What GET /.well-known/jwks.json serves: every key (active and retired), public members only. */
export function publicJwks(set: KeySet): { keys: Required<PublicJwk>[] } {
  return {
    keys: set.keys.map((key) => ({
      kty: 'OKP',
      crv: 'Ed25519',
      x: key.private_jwk.x,
      kid: key.kid,
      use: 'sig',
      alg: 'EdDSA',
    })),
  };
}

/** The keys that sign, newest first (later in the list when created in the same millisecond). */
export function signersOf(set: KeySet): Signer[] {
  return set.keys
    .map((key, index) => ({ key, index }))
    .filter(({ key }) => key.state === 'active')
    .sort((a, b) => b.key.created_at.localeCompare(a.key.created_at) || b.index - a.index)
    .map(({ key }) => ({ kid: key.kid, privateKey: createPrivateKey({ key: { ...key.private_jwk }, format: 'jwk' }) }));
}

/** Adds a new active key: from now on both it and the current key sign (the overlap). */
export function addKey(set: KeySet, now = new Date()): { set: KeySet; key: StoredKey } {
  const key = generateKey(now);
  return { set: { keys: [...set.keys, key] }, key };
}

/** Stops a key signing; it stays in the JWKS. The last active key cannot be retired. */
export function retireKey(set: KeySet, kid: string, now = new Date()): KeySet {
  const key = findKey(set, kid);
  if (key.state === 'retired') throw new KeySetError(`key ${kid} is already retired`);
  if (set.keys.filter((k) => k.state === 'active').length === 1) {
    throw new KeySetError(`key ${kid} is the only active key; add a new key first`);
  }
  return { keys: set.keys.map((k) => (k.kid === kid ? { ...k, state: 'retired', retired_at: now.toISOString() } : k)) };
}

/** Drops a retired key from the set (and so from the JWKS). Active keys must be retired first. */
export function removeKey(set: KeySet, kid: string): KeySet {
  const key = findKey(set, kid);
  if (key.state === 'active') throw new KeySetError(`key ${kid} is active; retire it first`);
  return { keys: set.keys.filter((k) => k.kid !== kid) };
}

function findKey(set: KeySet, kid: string): StoredKey {
  const key = set.keys.find((k) => k.kid === kid);
  if (!key) throw new KeySetError(`no key with kid ${kid}`);
  return key;
}
