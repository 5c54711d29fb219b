import {
  type SigningKey,
  createIdentityDevApp,
  generateSigningKey,
  signToken,
  type TokenIssuer,
} from '@hub/identity-stand-in';
import { listen } from '@hub/http';
import { createLogger } from '@hub/log';
import { SignJWT } from 'jose';
import type { Broker } from '@hub/broker';

export interface TestIdentity {
  url: string;
  jwksUrl: string;
  issuer: string;
  audience: string;
  key: SigningKey;
  /** A real user token signed by the identity stand-in. */
  userToken(user: { email: string; nome?: string; master?: boolean; sub?: string }): Promise<string>;
  /** A real application token. */
  appToken(clientId: string): Promise<string>;
  /** A token with any claims, header and lifetime: for the refusal tests. */
  craft(options: {
    claims?: Record<string, unknown>;
    issuer?: string;
    audience?: string;
    expiresIn?: string | number;
    kid?: string;
    key?: SigningKey;
    subject?: string;
  }): Promise<string>;
  /** Environment variables that point a service at this identity (and at the tests' broker). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts the identity stand-in in-process on a free port, with a fresh key. */
export async function startTestIdentity(options: { broker?: Broker } = {}): Promise<TestIdentity> {
  const { key } = await generateSigningKey();
  const audience = 'event-hub';
  const holder: { issuer: TokenIssuer } = { issuer: { issuer: 'pending', audience, ttlSeconds: 600, key } };
  const app = createIdentityDevApp({
    issuer: holder.issuer,
    broker: options.broker,
    logger: createLogger('identity-dev'),
  });
  const server = await listen(app, 0);
  holder.issuer.issuer = server.url;
  const issuer = holder.issuer;
  const jwksUrl = `${server.url}/.well-known/jwks.json`;
  return {
    url: server.url,
    jwksUrl,
    issuer: server.url,
    audience,
    key,
    userToken: async (user) => {
      const response = await fetch(`${server.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: user.email, nome: user.nome, master: user.master }),
      });
      if (!user.sub) return ((await response.json()) as { access_token: string }).access_token;
      return signToken(
        issuer,
        { email: user.email.toLowerCase(), name: user.nome ?? '', master: user.master ?? false, typ: 'usuario' },
        user.sub,
      );
    },
    appToken: (clientId) => signToken(issuer, { typ: 'aplicativo' }, clientId),
    craft: (o) => {
      const signer = o.key ?? key;
      const jwt = new SignJWT(o.claims ?? {})
        .setProtectedHeader({ alg: 'EdDSA', kid: o.kid ?? signer.kid })
        .setSubject(o.subject ?? 'sujeito')
        .setIssuer(o.issuer ?? server.url)
        .setAudience(o.audience ?? audience)
        .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
        .setExpirationTime(o.expiresIn ?? '10m');
      return jwt.sign(signer.privateKey);
    },
    env: {
      // The stand-in identity is a developer's: the configs built from this env run in LOCALHOST.
      HUB_AMBIENTE: 'LOCALHOST',
      IDENTITY_JWKS_URL: jwksUrl,
      IDENTITY_ISSUER: server.url,
      IDENTITY_AUDIENCE: audience,
      IDENTITY_ALGORITHMS: 'EdDSA',
      ...(process.env.RABBITMQ_URL ? { RABBITMQ_URL: process.env.RABBITMQ_URL } : {}),
    },
    close: () => server.close(),
  };
}

/** An unsigned token (alg "none"): must always be refused. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}
