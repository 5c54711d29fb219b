import { JwksUnavailableError, UnknownKeyError } from './errors.js';
import type { HeaderSource } from './headers.js';
import { type Jwk, type Jwks, type TrustedKey, trustedKeys } from './keys.js';
import {
  checkVerifyOptions,
  matchSignature,
  parseSignedDelivery,
  type RawBody,
  readPayload,
  type VerifiedSignature,
  type VerifyOptions,
} from './verify.js';

/** The part of fetch the verifier uses, so any runtime's fetch (or a test's) fits. */
export type FetchLike = (
  url: string,
  init: { signal?: AbortSignal; redirect?: 'error'; headers?: Record<string, string> },
) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;

export interface VerifierOptions {
  /** The hub's GET /.well-known/jwks.json: the only keys trusted. */
  jwksUrl: string | URL;
  /** How far webhook-timestamp may be from now, either way: a finite number ≥ 0. Default 300 s. */
  toleranceSeconds?: number;
  /**
   * The subscription this receiver serves (its id, or several): a genuine delivery whose body's
   * `assinatura_id` names another, or none, is refused (SubscriptionMismatchError), so a delivery
   * captured at another subscriber cannot be replayed here. Per call, the third argument of
   * verify/verifyDelivery overrides it.
   */
  expectedSubscription?: string | readonly string[];
  /** Bodies larger than this are refused before any signature is checked. Default 2 MiB. */
  maxBodyBytes?: number;
  /** Default: the runtime's global fetch. */
  fetch?: FetchLike;
  /** Milliseconds since the epoch, like Date.now (the default); drives the timestamp check and the cache. */
  now?: () => number;
  /** Least time between two fetches caused by an unknown kid. Default 60 s. */
  refetchIntervalSeconds?: number;
  /** After this the cached JWKS is fetched again anyway, so removed keys stop being trusted. Default 1 h. */
  maxAgeSeconds?: number;
  /** Time limit of one JWKS request. Default 5 s. */
  timeoutSeconds?: number;
  /** Told when a refresh fails and the cached keys are kept (the verifier carries on). */
  onWarning?: (message: string, error: unknown) => void;
}

/** A verified delivery with its parsed body. */
export interface VerifiedDelivery<T = unknown> extends VerifiedSignature {
  payload: T;
}

/** What one call may set: the subscription this delivery must be for (e.g. from the receiving URL). */
export interface VerifyCallOptions {
  expectedSubscription?: string | readonly string[];
}

export interface WebhookVerifier {
  /** Verifies a delivery and resolves to its parsed JSON body; rejects with a WebhookVerificationError or JwksUnavailableError. */
  verify<T = unknown>(headers: HeaderSource, rawBody: RawBody, options?: VerifyCallOptions): Promise<T>;
  /** The same, resolving to the body together with webhook-id, webhook-timestamp and the kid that matched. */
  verifyDelivery<T = unknown>(
    headers: HeaderSource,
    rawBody: RawBody,
    options?: VerifyCallOptions,
  ): Promise<VerifiedDelivery<T>>;
  /** The trusted JWKS entries, fetched when none are cached: a readiness check. */
  jwks(): Promise<Jwks>;
}

/**
 * A verifier bound to the hub's JWKS. The JWKS is fetched on first use and cached (concurrent
 * callers share one request); a delivery naming a kid the cache lacks (a key added by a rotation)
 * fetches it again, at most once per refetchIntervalSeconds, so forged kids cannot make it hammer
 * the hub; after maxAgeSeconds it is refreshed anyway, and a failed refresh keeps the cached keys.
 */
export function createVerifier(options: VerifierOptions): WebhookVerifier {
  checkVerifierOptions(options);
  const cache = jwksCache(options);
  const verifyOptions: VerifyOptions = {
    toleranceSeconds: options.toleranceSeconds,
    now: options.now,
    maxBodyBytes: options.maxBodyBytes,
  };

  const verifyDelivery = async <T>(
    headers: HeaderSource,
    rawBody: RawBody,
    call: VerifyCallOptions = {},
  ): Promise<VerifiedDelivery<T>> => {
    const expected = call.expectedSubscription ?? options.expectedSubscription;
    if (call.expectedSubscription !== undefined) checkVerifyOptions({ expectedSubscription: expected });
    // Form, size and time first: a malformed or replayed request never causes a JWKS request.
    const delivery = parseSignedDelivery(headers, rawBody, verifyOptions);
    let verified: VerifiedSignature;
    try {
      verified = matchSignature(delivery, (await cache.current()).keys);
    } catch (error) {
      if (!(error instanceof UnknownKeyError)) throw error;
      const fresh = await cache.refetchForUnknownKey();
      if (!fresh) throw error;
      verified = matchSignature(delivery, fresh.keys);
    }
    return { ...verified, payload: readPayload<T>(delivery, expected) };
  };

  return {
    verifyDelivery,
    verify: async <T>(headers: HeaderSource, rawBody: RawBody, call?: VerifyCallOptions) =>
      (await verifyDelivery<T>(headers, rawBody, call)).payload,
    jwks: async () => ({ keys: (await cache.current()).jwks }),
  };
}

/** Every number must be finite (NaN or Infinity would switch a check or the cache off): a TypeError now. */
function checkVerifierOptions(options: VerifierOptions): void {
  if (!options || (typeof options.jwksUrl !== 'string' && !(options.jwksUrl instanceof URL)))
    throw new TypeError('jwksUrl is required: the hub GET /.well-known/jwks.json');
  checkVerifyOptions(options);
  for (const name of ['refetchIntervalSeconds', 'maxAgeSeconds', 'timeoutSeconds'] as const) {
    const value = options[name];
    const least = name === 'timeoutSeconds' ? 'above 0' : '0 or more';
    if (value !== undefined && !(Number.isFinite(value) && (name === 'timeoutSeconds' ? value > 0 : value >= 0)))
      throw new TypeError(`${name} must be a finite number of seconds, ${least}; got ${value}`);
  }
}

interface CachedKeys {
  jwks: Jwk[];
  keys: TrustedKey[];
  at: number;
}

function jwksCache(options: VerifierOptions) {
  const url = String(options.jwksUrl);
  const now = options.now ?? Date.now;
  const refetchIntervalMs = (options.refetchIntervalSeconds ?? 60) * 1000;
  const maxAgeMs = (options.maxAgeSeconds ?? 3600) * 1000;
  const timeoutMs = (options.timeoutSeconds ?? 5) * 1000;
  const fetchJwks: FetchLike | undefined = options.fetch ?? globalThis.fetch?.bind(globalThis);
  if (!fetchJwks) throw new TypeError('this runtime has no global fetch; pass one as the fetch option');
  let cached: CachedKeys | undefined;
  let lastRefetchAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<CachedKeys> | undefined;

  const load = (): Promise<CachedKeys> => {
    inFlight ??= fetchOnce(fetchJwks, url, timeoutMs)
      .then((jwks) => {
        const keys = trustedKeys(jwks);
        cached = { jwks: keys.map((k) => k.jwk), keys, at: now() };
        return cached;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  return {
    async current(): Promise<CachedKeys> {
      if (!cached) return load();
      if (now() - cached.at < maxAgeMs) return cached;
      // Stale: refresh, but a hub that is briefly away must not make the known keys unusable.
      const stale = cached;
      return load().catch((error) => {
        options.onWarning?.('could not refresh the hub JWKS; keeping the cached keys', error);
        return stale;
      });
    },
    /** Undefined when it did not fetch (too soon after the last one) or the fetch failed. */
    async refetchForUnknownKey(): Promise<CachedKeys | undefined> {
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

async function fetchOnce(fetchJwks: FetchLike, url: string, timeoutMs: number): Promise<Jwks> {
  let response: Awaited<ReturnType<FetchLike>>;
  try {
    response = await fetchJwks(url, {
      signal: typeof globalThis.AbortSignal?.timeout === 'function' ? AbortSignal.timeout(timeoutMs) : undefined,
      // A redirect could hand the trust anchor to another origin.
      redirect: 'error',
      headers: { accept: 'application/json' },
    });
  } catch (error) {
    throw new JwksUnavailableError(`the hub JWKS at ${url} cannot be reached: ${(error as Error).message}`);
  }
  if (!response.ok) throw new JwksUnavailableError(`the hub JWKS at ${url} answered ${response.status}`);
  const body = await response.json().catch(() => undefined);
  if (!isJwks(body)) throw new JwksUnavailableError(`the hub JWKS at ${url} is not a JWKS`);
  return body;
}

function isJwks(value: unknown): value is Jwks {
  const keys = (value as { keys?: unknown } | null)?.keys;
  return Array.isArray(keys) && keys.every((k) => typeof k === 'object' && k !== null && typeof k.kty === 'string');
}
