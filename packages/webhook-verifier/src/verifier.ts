import { JwksUnavailableError, UnknownKeyError } from './errors.js';
import type { HeaderSource } from './headers.js';
import { type Jwk, type Jwks, type TrustedKey, trustedKeys } from './keys.js';
import {
  checkVerifyOptions,
  matchSignature,
  parseSignedDelivery,
  type RawBody,
  readPayload,
  requiredSubscription,
  type VerifiedSignature,
  type VerifyOptions,
} from './verify.js';

/** The part of fetch the verifier uses, so any runtime's fetch (or a test's) fits. */
export type FetchLike = (
  url: string,
  init: { signal?: AbortSignal; redirect?: 'error'; headers?: Record<string, string> },
) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;

export interface VerifierOptions {
  /**
   * The hub's GET /.well-known/jwks.json: the only keys trusted. https, or http on a loopback host
   * (127.0.0.1, ::1, localhost); any other http URL is refused (a TypeError) unless
   * allowInsecureHttpJwks is true: anyone on the path could hand the verifier keys of their own.
   */
  jwksUrl: string | URL;
  /** true to accept an http: jwksUrl on a host that is not loopback (a private network only). */
  allowInsecureHttpJwks?: boolean;
  /** How far webhook-timestamp may be from now, either way: a finite number ≥ 0. Default 300 s. */
  toleranceSeconds?: number;
  /**
   * The subscription this receiver serves (its id, or several): a genuine delivery whose body's
   * `assinatura_id` names another, or none, is refused (SubscriptionMismatchError), so a delivery
   * captured at another subscriber cannot be replayed here. Per call, the third argument of
   * verify/verifyDelivery overrides it. Required, here or on every call, unless
   * acceptAnySubscription is true: a call with neither rejects with a TypeError.
   */
  expectedSubscription?: string | readonly string[];
  /**
   * true to check the signature alone when no expectedSubscription is given: any subscriber's
   * delivery then verifies here. Only for a receiver that checks `assinatura_id` itself.
   */
  acceptAnySubscription?: boolean;
  /** Bodies larger than this are refused before any signature is checked. Default 2 MiB. */
  maxBodyBytes?: number;
  /** Default: the runtime's global fetch. */
  fetch?: FetchLike;
  /** Milliseconds since the epoch, like Date.now (the default); drives the timestamp check and the cache. */
  now?: () => number;
  /**
   * The cooldown of fetches a signature with an unknown kid causes: at most one per this many
   * seconds, however many such deliveries come; a failed refresh is retried after it too. Default 60 s.
   */
  refetchIntervalSeconds?: number;
  /**
   * How long a fetched JWKS is used as it is: the next delivery after this fetches it again, and a
   * kid missing from that fetch is dropped at once. So a key removed from the hub's JWKS stops
   * verifying at most this long after its removal. Default 300 s.
   */
  maxAgeSeconds?: number;
  /**
   * While the JWKS cannot be fetched, the cached keys are still used until they are this old, then
   * deliveries are refused with JwksUnavailableError (answer 503; the hub retries). Default 3600 s.
   */
  maxStaleSeconds?: number;
  /** Time limit of one JWKS request. Default 5 s. */
  timeoutSeconds?: number;
  /** Told when a refresh fails and the cached keys are kept (the verifier carries on). */
  onWarning?: (message: string, error: unknown) => void;
}

/** A verified delivery with its parsed body. */
export interface VerifiedDelivery<T = unknown> extends VerifiedSignature {
  payload: T;
}

/**
 * What one call may set: the subscription this delivery must be for (e.g. from the receiving URL),
 * which overrides the verifier's.
 */
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
 * callers share one request). It is fetched again
 * - when the cached one is maxAgeSeconds old (default 300 s), by the next delivery: a key removed
 *   from the hub's JWKS stops verifying within that bound, since a refetch replaces the keys whole;
 * - when a signature names a kid the cache lacks (a key added by a rotation), at most once per
 *   refetchIntervalSeconds (60 s), so forged kids cannot make it hammer the hub.
 * A failed refresh keeps the cached keys (tried again after refetchIntervalSeconds) until they are
 * maxStaleSeconds old (1 h); then JwksUnavailableError.
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
    if (call.expectedSubscription !== undefined)
      checkVerifyOptions({ expectedSubscription: call.expectedSubscription });
    const expected = requiredSubscription(
      call.expectedSubscription ?? options.expectedSubscription,
      options.acceptAnySubscription,
    );
    // Form, size and time first: a malformed or replayed request never causes a JWKS request.
    const delivery = parseSignedDelivery(headers, rawBody, verifyOptions);
    const { entry, fetched } = await cache.current();
    let verified: VerifiedSignature;
    try {
      verified = matchSignature(delivery, entry.keys);
    } catch (error) {
      // Keys fetched for this very delivery are as new as they get: no second fetch.
      if (!(error instanceof UnknownKeyError) || fetched) throw error;
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
    jwks: async () => ({ keys: (await cache.current()).entry.jwks }),
  };
}

/** Every number must be finite (NaN or Infinity would switch a check or the cache off): a TypeError now. */
function checkVerifierOptions(options: VerifierOptions): void {
  if (!options || (typeof options.jwksUrl !== 'string' && !(options.jwksUrl instanceof URL)))
    throw new TypeError('jwksUrl is required: the hub GET /.well-known/jwks.json');
  checkJwksUrl(options.jwksUrl, options.allowInsecureHttpJwks === true);
  checkVerifyOptions(options);
  for (const name of ['refetchIntervalSeconds', 'maxAgeSeconds', 'maxStaleSeconds', 'timeoutSeconds'] as const) {
    const value = options[name];
    const least = name === 'timeoutSeconds' ? 'above 0' : '0 or more';
    if (value !== undefined && !(Number.isFinite(value) && (name === 'timeoutSeconds' ? value > 0 : value >= 0)))
      throw new TypeError(`${name} must be a finite number of seconds, ${least}; got ${value}`);
  }
}

/** The hosts an http: JWKS URL may name: this machine, where nobody else is on the path. */
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** https, or http to loopback: over plain http elsewhere, anyone on the path can substitute the keys. */
function checkJwksUrl(jwksUrl: string | URL, allowInsecureHttp: boolean): void {
  let url: URL;
  try {
    url = new URL(String(jwksUrl));
  } catch {
    throw new TypeError(`jwksUrl must be an absolute URL; got ${String(jwksUrl).slice(0, 200)}`);
  }
  if (url.protocol === 'https:') return;
  if (url.protocol !== 'http:') throw new TypeError(`jwksUrl must be an https URL; got ${url.protocol}`);
  if (LOOPBACK.has(url.hostname) || allowInsecureHttp) return;
  throw new TypeError(
    `jwksUrl must be https (http only to 127.0.0.1, ::1 or localhost): over http to ${url.hostname} anyone ` +
      'on the path could hand this verifier keys of their own; set allowInsecureHttpJwks: true only on a private network',
  );
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
  const maxAgeMs = (options.maxAgeSeconds ?? 300) * 1000;
  const maxStaleMs = (options.maxStaleSeconds ?? 3600) * 1000;
  const timeoutMs = (options.timeoutSeconds ?? 5) * 1000;
  const fetchJwks: FetchLike | undefined = options.fetch ?? globalThis.fetch?.bind(globalThis);
  if (!fetchJwks) throw new TypeError('this runtime has no global fetch; pass one as the fetch option');
  let cached: CachedKeys | undefined;
  let lastUnknownKeyFetchAt = Number.NEGATIVE_INFINITY;
  let lastFailedRefreshAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<CachedKeys> | undefined;

  /** Fetches the JWKS; what it gets replaces the cached keys whole (a kid gone from it is gone). */
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
    /** The keys to verify with; `fetched` when they were fetched for this call (or a concurrent one). */
    async current(): Promise<{ entry: CachedKeys; fetched: boolean }> {
      const age = cached ? now() - cached.at : Number.POSITIVE_INFINITY;
      // None, or too old to trust without the hub's word: fetch, and fail if it cannot be fetched.
      if (!cached || age >= maxStaleMs) return { entry: await load(), fetched: true };
      if (age < maxAgeMs || now() - lastFailedRefreshAt < refetchIntervalMs) return { entry: cached, fetched: false };
      // Stale: refresh, but a hub that is briefly away must not make the known keys unusable.
      const stale = cached;
      try {
        return { entry: await load(), fetched: true };
      } catch (error) {
        lastFailedRefreshAt = now();
        options.onWarning?.('could not refresh the hub JWKS; keeping the cached keys', error);
        return { entry: stale, fetched: false };
      }
    },
    /** Undefined when it did not fetch (too soon after the last one) or the fetch failed. */
    async refetchForUnknownKey(): Promise<CachedKeys | undefined> {
      if (now() - lastUnknownKeyFetchAt < refetchIntervalMs) return undefined;
      lastUnknownKeyFetchAt = now();
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
