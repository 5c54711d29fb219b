import { ConfigError } from '@hub/config';
import { type publicJwks, thumbprint } from '@hub/signing';
import { z } from 'zod';

const publicJwk = z.looseObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'an Ed25519 public key, base64url'),
  kid: z.string().min(1),
});
const jwksSchema = z.object({ keys: z.array(publicJwk).min(1) });

/**
 * The public keys given in HUB_SIGNING_JWKS (what `hub-keys jwks` prints): what hub-api serves at
 * /.well-known/jwks.json when it is given no private key at all. A private member, a kid that is
 * not the key's thumbprint or anything but Ed25519 stops the start: the worker's readiness and the
 * subscribers compare kids, and a private key here would defeat the point.
 */
export function chavesPublicas(json: string): { jwks(): Promise<ReturnType<typeof publicJwks>> } {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw recusa('is not valid JSON');
  }
  const listed = (raw as { keys?: unknown } | null)?.keys;
  for (const [index, key] of (Array.isArray(listed) ? listed : []).entries()) {
    if (typeof key === 'object' && key !== null && PRIVATE_MEMBERS.some((member) => member in key))
      throw recusa(`keys.${index} holds a private key; give the public keys only (hub-keys jwks)`);
  }
  const parsed = jwksSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw recusa(`${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const keys = parsed.data.keys.map((key, index) => {
    if (key.kid !== thumbprint(key.x)) throw recusa(`keys.${index}.kid is not the thumbprint of its key`);
    return { kty: 'OKP', crv: 'Ed25519', x: key.x, kid: key.kid, use: 'sig', alg: 'EdDSA' } as const;
  });
  const jwks = { keys };
  return { jwks: async () => jwks };
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'private_jwk'];

const recusa = (problem: string) => new ConfigError(`invalid configuration:\n  HUB_SIGNING_JWKS ${problem}`);
