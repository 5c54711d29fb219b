import type { Jwks } from '@hub/signing/verify';
import { z } from 'zod';

/** Where the receiver gets the hub's public keys; tests may pass their own. */
export interface JwksProvider {
  /** The cached JWKS, fetched first when there is none (or it is older than maxAgeMs). */
  current(): Promise<Jwks>;
  /**
   * Fetches again because a delivery names a key the cache does not hold (a key added by a
   * rotation). At most once per refetch interval; undefined when it did not fetch.
   */
  refetchForUnknownKey(): Promise<Jwks | undefined>;
}

export class JwksUnavailableError extends Error {
  override name = 'JwksUnavailableError';
}

export interface JwksSourceOptions {
  url: string;
  /** Least time between two refetches caused by unknown keys. Default 30 s. */
  refetchIntervalMs?: number;
  /** After this the cache is refreshed anyway, so removed keys stop being trusted. Default 1 h. */
  maxAgeMs?: number;
  timeoutMs?: number;
  onWarning?: (message: string, error: unknown) => void;
  now?: () => number;
}

const jwksBody = z.object({
  keys: z.array(
    z.looseObject({
      kty: z.string(),
      crv: z.string().optional(),
      x: z.string().optional(),
      kid: z.string().optional(),
      use: z.string().optional(),
      alg: z.string().optional(),
    }),
  ),
});

/** The hub's JWKS over HTTP, cached; concurrent callers share one fetch. */
export function createJwksSource(options: JwksSourceOptions): JwksProvider {
  const refetchIntervalMs = options.refetchIntervalMs ?? 30_000;
  const maxAgeMs = options.maxAgeMs ?? 3_600_000;
  const now = options.now ?? Date.now;
  let cached: { jwks: Jwks; at: number } | undefined;
  let lastRefetchAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<Jwks> | undefined;

  const load = (): Promise<Jwks> => {
    inFlight ??= fetchJwks(options.url, options.timeoutMs ?? 5000)
      .then((jwks) => {
        cached = { jwks, at: now() };
        return jwks;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  return {
    async current() {
      if (!cached) return load();
      if (now() - cached.at < maxAgeMs) return cached.jwks;
      // Stale: refresh, but a hub that is briefly away must not make known keys unusable.
      return load().catch((error) => {
        options.onWarning?.('could not refresh the hub JWKS; keeping the cached keys', error);
        return cached!.jwks;
      });
    },
    async refetchForUnknownKey() {
      if (now() - lastRefetchAt < refetchIntervalMs) return undefined;
      lastRefetchAt = now();
      try {
        return await load();
      } catch (error) {
        options.onWarning?.('could not fetch the hub JWKS again for an unknown key', error);
        return undefined;
      }
    },
  };
}

async function fetchJwks(url: string, timeoutMs: number): Promise<Jwks> {
  let response: Response;
  try {
    response = await fetch(url, {
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
      headers: { accept: 'application/json' },
    });
  } catch (error) {
    throw new JwksUnavailableError(`the hub JWKS at ${url} cannot be reached: ${(error as Error).message}`);
  }
  if (!response.ok) throw new JwksUnavailableError(`the hub JWKS at ${url} answered ${response.status}`);
  const parsed = jwksBody.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) throw new JwksUnavailableError(`the hub JWKS at ${url} is not a JWKS`);
  return parsed.data;
}
