import { performance } from 'node:perf_hooks';

export interface AdaptiveLimitOptions {
  /** The most requests under way at once, whatever the answers take. */
  max: number;
  /** The fewest it ever lets through at once. */
  min?: number;
  /** The answer time aimed at: slower answers shrink the limit, faster ones let it grow back. */
  targetMs: number;
  now?: () => number;
}

/**
 * How many requests may be under way at once, adapted to how fast they are answered (additive
 * increase, multiplicative decrease, as TCP's congestion window and Netflix's concurrency-limits do).
 * Under a load the process takes, answers come within `targetMs` and the limit stays at `max`. Past
 * it, answers slow down as requests queue: an answer slower than the target cuts the limit by the
 * ratio of the two (by a fifth at most, at most once per `targetMs`), so that what waits is what can
 * be answered within about the target; each answer within it adds 1/limit back. A request over the
 * limit is refused at once by its caller, so under three times the load the accepted ones are still
 * answered in about `targetMs`, at about the rate the process sustains. Written here because no
 * maintained npm package does this for a plain node:http or express server (docs/decisions/
 * overload-refused-fast.md).
 */
export class AdaptiveLimit {
  private limite: number;
  private emAndamento = 0;
  private ultimoCorte = Number.NEGATIVE_INFINITY;
  private readonly min: number;
  private readonly now: () => number;

  constructor(private readonly options: AdaptiveLimitOptions) {
    this.limite = options.max;
    this.min = Math.min(options.max, options.min ?? 4);
    this.now = options.now ?? (() => performance.now());
  }

  /** The limit now, in requests. */
  get limit(): number {
    return Math.floor(this.limite);
  }

  get underWay(): number {
    return this.emAndamento;
  }

  /** Takes a slot; false when as many requests as the limit are under way (refuse this one). */
  acquire(): boolean {
    if (this.emAndamento >= Math.floor(this.limite)) return false;
    this.emAndamento += 1;
    return true;
  }

  /** Gives the slot back; `ms` is how long the request took to be answered (undefined: it failed, nothing learnt). */
  release(ms: number | undefined): void {
    this.emAndamento -= 1;
    if (ms === undefined) return;
    const { targetMs, max } = this.options;
    if (ms <= targetMs) {
      this.limite = Math.min(max, this.limite + 1 / this.limite);
      return;
    }
    const agora = this.now();
    if (agora - this.ultimoCorte < targetMs) return;
    this.ultimoCorte = agora;
    this.limite = Math.max(this.min, this.limite * Math.max(0.8, targetMs / ms));
  }
}
