/** The thresholds of a backlog (DELIVERY_ISOLATION_DEFERRALS and _BACKLOG; 0: never). */
export interface LimiaresDoAcumulo {
  /** Deferrals of one origin within one interval that isolate it. */
  adiamentosParaIsolar: number;
  /** Depth of the shared work queue from which the origin taking most of it is isolated. */
  acumuloParaIsolar: number;
}

/**
 * Fair scheduling's backlog rule, counted over one pass: an origin whose jobs keep being deferred
 * at its concurrency limit, or that takes at least half of the jobs of a shared queue deeper than the
 * threshold, is backlogged and gets a queue of its own.
 */
export class Acumulo {
  private adiamentos = new Map<string, number>();
  private trabalhos = new Map<string, number>();

  constructor(
    private readonly o: LimiaresDoAcumulo & {
      /** Jobs ready in the shared work queue now. */
      profundidade: () => Promise<number>;
    },
  ) {}

  /** A job of this origin was deferred at its limit: true when that makes the threshold, now. */
  anotarAdiamento(origem: string): boolean {
    const n = (this.adiamentos.get(origem) ?? 0) + 1;
    this.adiamentos.set(origem, n);
    return n === this.o.adiamentosParaIsolar;
  }

  /** A job of this origin was taken from the shared queue (its share of the queue). */
  anotarTrabalho(origem: string): void {
    this.trabalhos.set(origem, (this.trabalhos.get(origem) ?? 0) + 1);
  }

  /** Whether a job of this origin was deferred in this pass. */
  adiada(origem: string): boolean {
    return (this.adiamentos.get(origem) ?? 0) > 0;
  }

  /** The origins backlogged in this pass. */
  async alvos(): Promise<Set<string>> {
    const { adiamentosParaIsolar, acumuloParaIsolar } = this.o;
    const alvos = new Set<string>();
    if (adiamentosParaIsolar > 0)
      for (const [origem, n] of this.adiamentos) if (n >= adiamentosParaIsolar) alvos.add(origem);
    if (acumuloParaIsolar > 0 && this.trabalhos.size >= 2) {
      const total = [...this.trabalhos.values()].reduce((a, b) => a + b, 0);
      const [maior, n] = [...this.trabalhos].reduce((a, b) => (b[1] > a[1] ? b : a));
      if (n * 2 >= total && (await this.o.profundidade()) >= acumuloParaIsolar) alvos.add(maior);
    }
    return alvos;
  }

  /** A new pass counts afresh. */
  recomecar(): void {
    this.adiamentos = new Map();
    this.trabalhos = new Map();
  }
}
