import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from './errors';

const WINDOW_SECONDS = 60;

export interface MinuteBudgetOptions {
  /** The policy's name in `RateLimit-Policy` and `RateLimit` ("usuario", "aplicativo", "reenvio"…). */
  policy: string;
  /** Requests per minute per key. */
  perMinute: number;
  /** What the refusal's detail says is over the budget ("requests per minute for this user"). */
  what: string;
}

/** One counted request: the headers its answer carries, and the refusal when it is over the budget. */
export interface Counted {
  policyHeader: string;
  stateHeader: string;
  refusal?: AppError;
}

/**
 * A budget per key and minute in this process's memory: a fixed window from the key's first request
 * (rate-limiter-flexible's RateLimiterMemory). Every count carries the IETF draft headers in
 * structured-field form (`RateLimit-Policy: "usuario";q=600;w=60`, `RateLimit: "usuario";r=599;t=60`);
 * over the budget, the refusal is 429 `muitas_requisicoes` with Retry-After (seconds until the window
 * ends). The gateway's rate limits and hub-api's budgets per application both count with it.
 */
export function minuteBudget(options: MinuteBudgetOptions): (key: string) => Promise<Counted> {
  const limiter = new RateLimiterMemory({ points: options.perMinute, duration: WINDOW_SECONDS });
  const policyHeader = `"${options.policy}";q=${options.perMinute};w=${WINDOW_SECONDS}`;
  return async (key) => {
    let state: RateLimiterRes;
    let over = false;
    try {
      state = await limiter.consume(key);
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused;
      state = refused;
      over = true;
    }
    const resetSeconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
    const counted: Counted = {
      policyHeader,
      stateHeader: `"${options.policy}";r=${state.remainingPoints};t=${resetSeconds}`,
    };
    if (over)
      counted.refusal = new AppError(
        429,
        'muitas_requisicoes',
        `more than ${options.perMinute} ${options.what}; wait for Retry-After seconds`,
        undefined,
        { 'Retry-After': String(resetSeconds) },
      );
    return counted;
  };
}
