import { type KeySet, publicJwks } from './keys';

/** What a signer learns by comparing its keys with the JWKS the hub publishes. */
export interface PublicationCheck {
  /** Every active key is published with the same public key. */
  published: boolean;
  /** Active keys missing from the JWKS (or published with another public key). */
  missing: string[];
  /** Why the JWKS could not be read, when it could not. */
  error?: string;
  checkedAt: Date;
}

export interface PublishedKeysOptions {
  /** How long a JWKS that contains every active key is trusted. Default 30 s. */
  refreshMs?: number;
  /** The shortest pause between two reads while a key is missing or the JWKS unreachable. Default 2 s. */
  retryMs?: number;
  timeoutMs?: number;
}

/**
 * Whether the keys a process signs with are the keys the hub publishes (architecture §1): a delivery
 * signed with a key that is not in GET /.well-known/jwks.json cannot be verified by anyone, so a
 * signer in that state is not ready. Reads the JWKS at `url`, trusts a good answer for `refreshMs`,
 * and reads again sooner while something is wrong.
 */
export class PublishedKeys {
  private last?: PublicationCheck;
  /** The active kids `last` was made for: a rotation is checked again at once. */
  private lastKids?: string;
  private checking?: Promise<PublicationCheck>;

  constructor(
    private readonly url: string,
    private readonly options: PublishedKeysOptions = {},
  ) {}

  /** The last answer, refreshed when it is old; never throws. */
  async check(set: KeySet): Promise<PublicationCheck> {
    const last = this.last;
    const age = last ? Date.now() - last.checkedAt.getTime() : Number.POSITIVE_INFINITY;
    const fresh = last?.published ? (this.options.refreshMs ?? 30_000) : (this.options.retryMs ?? 2_000);
    if (last && age < fresh && this.lastKids === activeKids(set)) return last;
    this.checking ??= this.read(set).finally(() => {
      this.checking = undefined;
    });
    this.last = await this.checking;
    this.lastKids = activeKids(set);
    return this.last;
  }

  private async read(set: KeySet): Promise<PublicationCheck> {
    const active = publicJwks({ keys: set.keys.filter((k) => k.state === 'active') }).keys;
    const checkedAt = new Date();
    let published: Array<{ kid?: unknown; x?: unknown }>;
    try {
      const response = await fetch(this.url, { signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000) });
      if (!response.ok) throw new Error(`${this.url} answered ${response.status}`);
      const body = (await response.json()) as { keys?: unknown };
      if (!Array.isArray(body.keys)) throw new Error(`${this.url} is not a JWKS (no "keys" array)`);
      published = body.keys as typeof published;
    } catch (error) {
      const missing = active.map((k) => k.kid);
      return { published: false, missing, error: (error as Error).message, checkedAt };
    }
    const missing = active
      .filter((key) => !published.some((p) => p.kid === key.kid && p.x === key.x))
      .map((k) => k.kid);
    return { published: missing.length === 0, missing, checkedAt };
  }
}

const activeKids = (set: KeySet) =>
  set.keys
    .filter((k) => k.state === 'active')
    .map((k) => k.kid)
    .join(' ');
