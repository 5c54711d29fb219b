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
}

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

  async function verify(token: string): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: options.algorithms,
        clockTolerance: 30,
        requiredClaims: ['exp', 'sub'],
      });
      return payload;
    } catch (error) {
      throw fromJose(error);
    }
  }

  function typed<S extends z.ZodType>(schema: S, payload: JWTPayload, expected: string): z.output<S> {
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      throw unauthorized(`this route needs a token of type "${expected}"`, 'tipo_de_token_invalido');
    }
    return parsed.data;
  }

  return {
    user: async (token) => typed(userClaims, await verify(token), 'usuario'),
    application: async (token) => typed(applicationClaims, await verify(token), 'aplicativo'),
  };
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
    return new AppError(503, 'identidade_indisponivel', 'the identity service keys cannot be read right now');
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
