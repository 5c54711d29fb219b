import type { Logger } from '@hub/log';
import { AppError, forbidden, unauthorized } from '@hub/http';
import { type AcessoAtual, acessoAtualSchema } from '@hub/contracts';
import type { UserClaims } from './tokens';

/** Answers "who is this caller and what may they do", or refuses (401/403). */
export interface AccessResolver {
  resolve(claims: UserClaims, token: string): Promise<AcessoAtual>;
}

interface Entry {
  master: boolean;
  expires: number;
  /** Until when this answer may still stand in for the source while the source cannot answer. */
  staleUntil: number;
  result: Promise<AcessoAtual>;
}

/** The access service could not answer (5xx, unreachable): not an answer about the caller. */
const indisponivel = (error: unknown) => !(error instanceof AppError) || error.status >= 500;

/** How long past its ttl an answer stands in while the access service cannot answer (ACCESS_CACHE_STALE_IF_ERROR). */
export const ACESSO_VELHO_MS = 60_000;
/** Seconds a caller is told to wait when permissions cannot be checked (the access service restarting). */
export const ACESSO_RETRY_AFTER_S = 5;

export const acessoIndisponivel = () =>
  new AppError(
    503,
    'acesso_indisponivel',
    'permissions cannot be checked right now; send the request again after Retry-After',
    undefined,
    {
      'Retry-After': String(ACESSO_RETRY_AFTER_S),
    },
  );

/**
 * Keeps the answers of another resolver for at most `ttlMs` per e-mail. `forget(email)` drops one
 * caller at once (everyone without an e-mail); it is called on every `acesso.alterado` message, so a
 * deactivated access is refused everywhere within a second. Refusals are cached too, so a refused
 * caller cannot hammer the source; failures to reach the source (5xx) are not answers and are not kept.
 *
 * While the source cannot answer (its database failing over, its process restarting), the last
 * answer for a caller stands in for up to `staleMs` past its ttl (stale-if-error): nobody can change
 * an access while the access service cannot reach its registry either, and a change announced drops
 * the answer at once (`forget`), so what stands in is what the registry still says
 * (docs/decisions/read-replica.md).
 */
export class CachedAccessResolver implements AccessResolver {
  private readonly cache = new Map<string, Entry>();

  constructor(
    private readonly source: AccessResolver,
    private readonly ttlMs = 5_000,
    private readonly staleMs = ACESSO_VELHO_MS,
  ) {}

  resolve(claims: UserClaims, token: string): Promise<AcessoAtual> {
    const key = claims.email.trim().toLowerCase();
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.expires > now && cached.master === claims.master) return cached.result;
    const anterior = cached && cached.master === claims.master && cached.staleUntil > now ? cached : undefined;
    const entry: Entry = {
      master: claims.master,
      expires: now + this.ttlMs,
      staleUntil: now + this.ttlMs + this.staleMs,
      result: Promise.resolve(undefined as never),
    };
    entry.result = this.source.resolve(claims, token).catch((error: unknown) => {
      // Nothing stands in for an answer `forget` dropped meanwhile (a change announced while asking).
      if (!anterior || !indisponivel(error) || this.cache.get(key) !== entry) throw error;
      // Asked again after a ttl; standing in ends when the last real answer's time is up.
      entry.staleUntil = anterior.staleUntil;
      entry.expires = Math.min(entry.expires, anterior.staleUntil);
      return anterior.result;
    });
    this.cache.set(key, entry);
    entry.result.catch((error) => {
      if (indisponivel(error) && this.cache.get(key) === entry) this.cache.delete(key);
    });
    if (this.cache.size > 50_000) this.evictExpired(now);
    return entry.result;
  }

  forget(email?: string): void {
    if (email) this.cache.delete(email.trim().toLowerCase());
    else this.cache.clear();
  }

  private evictExpired(now: number): void {
    for (const [key, entry] of this.cache) if (entry.staleUntil <= now) this.cache.delete(key);
  }
}

/** Asks the access service, GET /auth/acesso with the caller's own token. */
class AccessServiceClient implements AccessResolver {
  constructor(
    private readonly accessUrl: string,
    private readonly logger: Logger,
  ) {}

  resolve(_claims: UserClaims, token: string): Promise<AcessoAtual> {
    return this.fetch(token);
  }

  private async fetch(token: string): Promise<AcessoAtual> {
    let response: Response;
    try {
      response = await fetch(`${this.accessUrl}/auth/acesso`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(3_000),
      });
    } catch (error) {
      this.logger.error({ err: error }, 'access service unreachable');
      throw acessoIndisponivel();
    }
    const body = (await response.json().catch(() => ({}))) as { codigo?: string; detail?: string };
    if (response.status === 200) return acessoAtualSchema.parse(body);
    const detail = body.detail ?? 'access refused';
    if (response.status === 401) throw unauthorized(detail, body.codigo);
    if (response.status === 403) throw forbidden(detail, body.codigo);
    this.logger.error({ status: response.status }, 'access service answered unexpectedly');
    throw acessoIndisponivel();
  }
}

/** What services other than access use: the access service's answers, cached. */
export class RemoteAccessResolver extends CachedAccessResolver {
  constructor(accessUrl: string, logger: Logger, ttlMs = 5_000, staleMs = ACESSO_VELHO_MS) {
    super(new AccessServiceClient(accessUrl, logger), ttlMs, staleMs);
  }
}
