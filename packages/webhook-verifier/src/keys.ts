import nacl from 'tweetnacl';
import { decodeBase64 } from './base64.js';

/** One public key as the hub's GET /.well-known/jwks.json serves it. */
export interface Jwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
  use?: string;
  alg?: string;
}

export interface Jwks {
  keys: Jwk[];
}

/** A JWKS entry that can verify a `v1a` signature, its public key decoded once. */
export interface TrustedKey {
  kid: string | undefined;
  publicKey: Uint8Array;
  jwk: Jwk;
}

/**
 * The entries of a JWKS that can verify: kty OKP, crv Ed25519, 32 bytes of `x`, and (when given)
 * use `sig` and alg EdDSA. Anything else (RSA, EC, X25519, encryption keys) is skipped, not trusted.
 */
export function trustedKeys(keys: Jwks | readonly Jwk[]): TrustedKey[] {
  const list = Array.isArray(keys) ? keys : ((keys as Jwks | undefined)?.keys ?? []);
  const trusted: TrustedKey[] = [];
  for (const jwk of list) {
    if (!jwk || typeof jwk !== 'object') continue;
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') continue;
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    if (jwk.alg !== undefined && jwk.alg !== 'EdDSA' && jwk.alg !== 'Ed25519') continue;
    const publicKey = decodeBase64(jwk.x);
    if (!publicKey || publicKey.length !== nacl.sign.publicKeyLength) continue;
    trusted.push({ kid: typeof jwk.kid === 'string' ? jwk.kid : undefined, publicKey, jwk });
  }
  return trusted;
}
