import { createHash } from 'node:crypto';
import { bearerToken, type TokenVerifier } from '@hub/auth';

/** Who sent a request, as far as a verified token says: a user by e-mail, an application by client_id. */
export interface Caller {
  tipo: 'usuario' | 'aplicativo';
  id: string;
}

export type IdentifyCaller = (authorization: string | undefined) => Promise<Caller | undefined>;

export interface CallerCacheOptions {
  /** How long a verified token is remembered at most (never past its `exp`). */
  ttlMs: number;
  /** How long a token that failed verification is remembered as naming nobody. */
  refusedTtlMs: number;
  /** Tokens remembered at once; the oldest are dropped first. */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  caller: Promise<Caller | undefined>;
  until: number;
}

const NOBODY = Promise.resolve(undefined);

/**
 * An Authorization header up to this length is its own cache key; a longer one is keyed on its
 * SHA-256. A token of the identity service is well under it; a client may send headers of 16 KB
 * (node:http's limit), and 10,000 distinct forged ones (sent in seconds, over the budget even: the
 * caller is known before its budget is counted) kept 150 MB in the cache.
 */
const KEY_MAX = 2048;

/** The header as its cache key. The digest's key starts with a line feed, which no header value holds. */
const keyOf = (authorization: string) =>
  authorization.length <= KEY_MAX ? authorization : `\n${createHash('sha256').update(authorization).digest('base64')}`;

/**
 * The caller of a request, for the rate limit: the token is verified as the services verify it
 * (signature, issuer, audience, algorithm, expiry), so a forged or stale token names nobody and the
 * request is counted by its address. Verified tokens are remembered briefly, so the hop costs one
 * map lookup; concurrent requests with the same new token share one verification. A refusal is
 * remembered for `refusedTtlMs` only: a flood of one forged token costs one verification each
 * time, and a token refused while the identity keys were unreachable is tried again soon after.
 * Garbage cannot grow the cache past `maxEntries` (the oldest go first). The cache is keyed on the
 * whole Authorization header (a long one on its digest: KEY_MAX), so a remembered request is found
 * without parsing it.
 */
export function createCallerIdentifier(verifier: TokenVerifier, options: CallerCacheOptions): IdentifyCaller {
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, Entry>();

  async function verify(token: string): Promise<{ caller: Caller; expiresAt: number } | undefined> {
    const claims = unverifiedClaims(token);
    try {
      // The claims only choose which check to run; the verifier decides whether they are true.
      const caller: Caller =
        claims?.typ === 'aplicativo'
          ? { tipo: 'aplicativo', id: (await verifier.application(token)).sub }
          : { tipo: 'usuario', id: (await verifier.user(token)).email.toLowerCase() };
      return { caller, expiresAt: typeof claims?.exp === 'number' ? claims.exp * 1000 : Number.POSITIVE_INFINITY };
    } catch {
      return undefined;
    }
  }

  const identify: IdentifyCaller = (authorization) => {
    if (authorization === undefined) return NOBODY;
    const at = now();
    const key = keyOf(authorization);
    const hit = cache.get(key);
    if (hit && hit.until > at) return hit.caller;
    if (hit) cache.delete(key);
    let token: string;
    try {
      token = bearerToken(authorization);
    } catch {
      return NOBODY;
    }
    const entry: Entry = { caller: NOBODY, until: at + options.ttlMs };
    entry.caller = verify(token).then((verified) => {
      if (!verified) {
        entry.until = Math.min(entry.until, now() + options.refusedTtlMs);
        return undefined;
      }
      entry.until = Math.min(entry.until, verified.expiresAt);
      return verified.caller;
    });
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
    cache.set(key, entry);
    return entry.caller;
  };
  return identify;
}

/** The payload of a JWT, unchecked; undefined when it is not one. */
function unverifiedClaims(token: string): { typ?: unknown; exp?: unknown } | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null ? claims : undefined;
  } catch {
    return undefined;
  }
}
