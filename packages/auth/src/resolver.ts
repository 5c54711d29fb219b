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
  result: Promise<AcessoAtual>;
}

/**
 * Keeps the answers of another resolver for at most `ttlMs` per e-mail. `forget(email)` drops one
 * caller at once (everyone without an e-mail); it is called on every `acesso.alterado` message, so a
 * deactivated access is refused everywhere within a second. Refusals are cached too, so a refused
 * caller cannot hammer the source; failures to reach the source (5xx) are not answers and are not kept.
 */
export class CachedAccessResolver implements AccessResolver {
  private readonly cache = new Map<string, Entry>();

  constructor(
    private readonly source: AccessResolver,
    private readonly ttlMs = 5_000,
  ) {}

  resolve(claims: UserClaims, token: string): Promise<AcessoAtual> {
    const key = claims.email.trim().toLowerCase();
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.expires > now && cached.master === claims.master) return cached.result;
    const result = this.source.resolve(claims, token);
    const entry = { master: claims.master, expires: now + this.ttlMs, result };
    this.cache.set(key, entry);
    result.catch((error) => {
      if (!(error instanceof AppError) || error.status >= 500) {
        if (this.cache.get(key) === entry) this.cache.delete(key);
      }
    });
    if (this.cache.size > 50_000) this.evictExpired(now);
    return result;
  }

  forget(email?: string): void {
    if (email) this.cache.delete(email.trim().toLowerCase());
    else this.cache.clear();
  }

  private evictExpired(now: number): void {
    for (const [key, entry] of this.cache) if (entry.expires <= now) this.cache.delete(key);
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
      throw new AppError(503, 'acesso_indisponivel', 'permissions cannot be checked right now');
    }
    const body = (await response.json().catch(() => ({}))) as { codigo?: string; detail?: string };
    if (response.status === 200) return acessoAtualSchema.parse(body);
    const detail = body.detail ?? 'access refused';
    if (response.status === 401) throw unauthorized(detail, body.codigo);
    if (response.status === 403) throw forbidden(detail, body.codigo);
    this.logger.error({ status: response.status }, 'access service answered unexpectedly');
    throw new AppError(503, 'acesso_indisponivel', 'permissions cannot be checked right now');
  }
}

/** What services other than access use: the access service's answers, cached. */
export class RemoteAccessResolver extends CachedAccessResolver {
  constructor(accessUrl: string, logger: Logger, ttlMs = 5_000) {
    super(new AccessServiceClient(accessUrl, logger), ttlMs);
  }
}
