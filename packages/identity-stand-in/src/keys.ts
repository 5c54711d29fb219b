import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';

export interface SigningKey {
  kid: string;
  privateKey: Awaited<ReturnType<typeof importJWK>>;
  publicJwk: JWK;
}

export async function generateSigningKey(): Promise<{ key: SigningKey; privateJwk: JWK }> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const privateJwk = await exportJWK(privateKey);
  return { key: await signingKeyFrom(privateJwk), privateJwk };
}

export async function signingKeyFrom(privateJwk: JWK): Promise<SigningKey> {
  const { d: _private, ...publicPart } = privateJwk;
  const kid = await calculateJwkThumbprint(publicPart);
  return {
    kid,
    privateKey: await importJWK({ ...privateJwk, alg: 'EdDSA' }, 'EdDSA'),
    publicJwk: { ...publicPart, kid, alg: 'EdDSA', use: 'sig' },
  };
}

export interface TokenIssuer {
  issuer: string;
  audience: string;
  ttlSeconds: number;
  key: SigningKey;
}

export function signToken(issuer: TokenIssuer, claims: Record<string, unknown>, subject: string): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'EdDSA', kid: issuer.key.kid, typ: 'JWT' })
    .setSubject(subject)
    .setIssuer(issuer.issuer)
    .setAudience(issuer.audience)
    .setIssuedAt()
    .setExpirationTime(`${issuer.ttlSeconds}s`)
    .sign(issuer.key.privateKey);
}
