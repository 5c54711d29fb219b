import { AppError, unauthorized } from '@hub/http';
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { z } from 'zod';

export const userClaims = z.object({
  sub: z.string().min(1),
  email: z.string().min(1),
  name: z.string().optional().default(''),
  master: z.boolean().optional().default(false),
  typ: z.literal('usuario'),
});
export type UserClaims = z.infer<typeof userClaims>;

/**
 * An e-mail of printable ASCII only. E-mails are compared lower-cased, and `toLowerCase` folds some
 * non-ASCII letters onto ASCII ones (U+212A KELVIN SIGN becomes "k"): a token for
 * "\u212Aaren@…" would have resolved to karen@…'s access. Internationalised domains travel in their
 * ASCII (xn--) form. Nothing is trimmed first: String#trim removes Unicode spaces too (U+00A0,
 * U+FEFF, U+3000…), and the access service trims before it looks an e-mail up, so a token for
 * "karen@…\u00a0" passed and resolved to karen@…'s access (attack review).
 */
export const emailAscii = (email: string) => /^[\x21-\x7e]+$/.test(email);

export const applicationClaims = z.object({
  sub: z.string().min(1),
  typ: z.literal('aplicativo'),
});
export type ApplicationClaims = z.infer<typeof applicationClaims>;

export interface VerifierOptions {
  jwksUrl: string;
  issuer: string;
  audience: string;
  algorithms: string[];
  /**
   * How long a verified token is remembered by its exact text (default 60 s, never past its `exp`
   * plus the clock tolerance; 0 turns it off). A publisher sends the same token for minutes: the
   * signature check (Ed25519 through WebCrypto, a thread-pool job) then runs once, not per request.
   */
  verifiedCacheMs?: number;
  /** Tokens remembered at most (the oldest are dropped first). */
  verifiedCacheSize?: number;
  /** The clock (tests). */
  now?: () => number;
}

const CLOCK_TOLERANCE_S = 30;

export interface TokenVerifier {
  user(token: string): Promise<UserClaims>;
  application(token: string): Promise<ApplicationClaims>;
}

/**
 * Verifies identity tokens against the identity service's JWKS: pinned algorithms, issuer and
 * audience required, 30 s of clock tolerance. The JWKS is cached, and an unknown `kid` refetches it
 * at most once per cooldown, so forged kids cannot cause a fetch storm.
 */
export function createTokenVerifier(options: VerifierOptions): TokenVerifier {
  const remote = createRemoteJWKSet(new URL(options.jwksUrl), {
    cooldownDuration: 30_000,
    cacheMaxAge: 10 * 60_000,
    timeoutDuration: 5_000,
  });
  // Whatever goes wrong while reading the key set (refused, 5xx, not JSON, timeout) is the identity
  // service's outage, not the caller's bad token: it must not send signed-in users back to sign in.
  const jwks: JWTVerifyGetKey = async (header, token) => {
    try {
      return await remote(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      throw new KeysUnavailable(error);
    }
  };

  const now = options.now ?? Date.now;
  const cacheMs = options.verifiedCacheMs ?? 60_000;
  const cacheSize = options.verifiedCacheSize ?? 10_000;
  // Insertion order is age order: the first key is the oldest. Only successes are kept, so a
  // flood of bad tokens costs a verification each, as before, and cannot evict good ones.
  const verified = new Map<string, Verified>();

  async function verify(token: string): Promise<Verified> {
    const hit = verified.get(token);
    if (hit && hit.until > now()) return hit;
    if (hit) verified.delete(token);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: options.algorithms,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp', 'sub'],
        currentDate: new Date(now()),
      }));
    } catch (error) {
      throw fromJose(error);
    }
    // exp is required above; a token stops being accepted from the cache when jose would refuse it.
    const entry: Verified = {
      payload,
      until: Math.min(now() + cacheMs, ((payload.exp as number) + CLOCK_TOLERANCE_S) * 1000),
    };
    if (cacheMs > 0) {
      if (verified.size >= cacheSize) verified.delete(verified.keys().next().value as string);
      verified.set(token, entry);
    }
    return entry;
  }

  function typed<S extends z.ZodType>(schema: S, payload: JWTPayload, expected: string): z.output<S> {
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      throw unauthorized(`this route needs a token of type "${expected}"`, 'tipo_de_token_invalido');
    }
    return parsed.data;
  }

  // A remembered token's claims are typed once too (zod's parse was most of a cached check's cost);
  // a token of the other type is refused each time, as before.
  return {
    user: async (token) => {
      const entry = await verify(token);
      entry.user ??= typed(userClaims, entry.payload, 'usuario');
      if (!emailAscii(entry.user.email))
        throw unauthorized('the token’s e-mail is not an ASCII address: the hub does not resolve it', 'token_invalido');
      return entry.user;
    },
    application: async (token) => {
      const entry = await verify(token);
      entry.application ??= typed(applicationClaims, entry.payload, 'aplicativo');
      return entry.application;
    },
  };
}

/** A verified token's payload, until when it is remembered, and its claims once typed. */
interface Verified {
  payload: JWTPayload;
  until: number;
  user?: UserClaims;
  application?: ApplicationClaims;
}

class KeysUnavailable extends Error {
  constructor(cause: unknown) {
    super('the identity JWKS cannot be read', { cause });
  }
}

function fromJose(error: unknown): AppError {
  if (error instanceof errors.JWTExpired) return unauthorized('the token has expired', 'token_expirado');
  if (error instanceof errors.JWTClaimValidationFailed)
    return unauthorized(`the token's "${error.claim}" claim is not accepted`, 'token_invalido');
  if (error instanceof errors.JOSEAlgNotAllowed)
    return unauthorized('the token is signed with an algorithm that is not accepted', 'token_invalido');
  if (error instanceof errors.JWKSNoMatchingKey)
    return unauthorized('the token is signed by an unknown key', 'token_invalido');
  if (error instanceof KeysUnavailable) {
    return new AppError(
      503,
      'identidade_indisponivel',
      'the identity service keys cannot be read right now; send the request again after Retry-After',
      undefined,
      { 'Retry-After': '5' },
    );
  }
  if (error instanceof errors.JOSEError) return unauthorized('the token is not valid', 'token_invalido');
  if (error instanceof TypeError) return unauthorized('the token is not valid', 'token_invalido');
  throw error;
}

/** The token of an `Authorization: Bearer …` header. */
export function bearerToken(header: string | undefined): string {
  const match = header ? /^Bearer\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header) : null;
  if (!match?.[1]) throw unauthorized('send the token in the Authorization header: Bearer <token>');
  return match[1];
}
