/** The worker is stopping: a job waiting for its turn goes back to the queue. */
export class Parando extends Error {
  override name = 'Parando';
}

interface Espera {
  resolve: (liberar: (() => void) | null) => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout;
}

interface Origem {
  ativos: number;
  esperando: Espera[];
  /** Starts allowed now by the per-second limit (a token bucket of one second's worth). */
  fichas: number;
  /** When the bucket was last filled. */
  enchidoEm: number;
  /** A wake-up for the next token, while jobs wait only for it. */
  despertador?: NodeJS.Timeout;
}

/** The limits of one origin for this process, read anew at every entry (they change at run time). */
export interface LimitesDaOrigem {
  concorrencia: number;
  /** starts per second; null: none */
  porSegundo: number | null;
}

/**
 * At most `concorrencia` POSTs under way per origin (scheme://host:port), started at most
 * `porSegundo` a second. A job over a limit waits in memory for its turn, at most `esperaMaximaMs`:
 * a destination that answers fast serves its queue from memory (no churn), while the jobs of a
 * stuck or throttled one give up their wait and are deferred by the caller (through a delay
 * queue), so they cannot hold the prefetch and starve the other destinations.
 */
export class LimitePorDestino {
  private readonly origens = new Map<string, Origem>();

  constructor(
    private readonly limites: (origem: string) => LimitesDaOrigem,
    private readonly esperaMaximaMs: number,
    private readonly agora: () => number = () => performance.now(),
  ) {}

  /** A turn (call the function it gives when the POST is over), or null when the wait ran out. */
  entrar(origem: string): Promise<(() => void) | null> {
    let estado = this.origens.get(origem);
    if (!estado) {
      estado = { ativos: 0, esperando: [], fichas: Number.POSITIVE_INFINITY, enchidoEm: this.agora() };
      this.origens.set(origem, estado);
    }
    if (estado.esperando.length === 0 && this.podeComecar(origem, estado)) {
      this.comecar(estado);
      return Promise.resolve(this.liberador(origem, estado));
    }
    const alvo = estado;
    return new Promise((resolve, reject) => {
      const espera: Espera = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = alvo.esperando.indexOf(espera);
          if (i >= 0) alvo.esperando.splice(i, 1);
          resolve(null);
        }, this.esperaMaximaMs),
      };
      alvo.esperando.push(espera);
      this.despachar(origem, alvo);
    });
  }

  /** POSTs under way to an origin (metrics, tests). */
  ativos(origem: string): number {
    return this.origens.get(origem)?.ativos ?? 0;
  }

  /** Every origin with POSTs under way or jobs waiting, and how many POSTs (metrics). */
  emAndamento(): [string, number][] {
    return [...this.origens].map(([origem, estado]) => [origem, estado.ativos]);
  }

  /** The limits may have changed (a refresh of the destinations): waiting jobs are looked at again. */
  reavaliar(): void {
    for (const [origem, estado] of this.origens) this.despachar(origem, estado);
  }

  /**
   * The jobs of an origin waiting for their turn stop waiting now, as if their wait had run out (null):
   * its jobs have somewhere better to wait (its own queue, once isolated) than this process's prefetch.
   */
  dispensar(origem: string): void {
    const estado = this.origens.get(origem);
    if (!estado) return;
    for (const espera of estado.esperando.splice(0)) {
      clearTimeout(espera.timer);
      espera.resolve(null);
    }
    this.despachar(origem, estado);
  }

  /** Every job still waiting for its turn is told to go back (Parando). */
  dispensarEsperas(): void {
    for (const estado of this.origens.values()) {
      clearTimeout(estado.despertador);
      estado.despertador = undefined;
      for (const espera of estado.esperando.splice(0)) {
        clearTimeout(espera.timer);
        espera.reject(new Parando('the worker is stopping'));
      }
    }
  }

  private podeComecar(origem: string, estado: Origem): boolean {
    const { concorrencia, porSegundo } = this.limites(origem);
    if (estado.ativos >= concorrencia) return false;
    if (porSegundo === null) return true;
    const agora = this.agora();
    estado.fichas = Math.min(porSegundo, estado.fichas + ((agora - estado.enchidoEm) / 1000) * porSegundo);
    estado.enchidoEm = agora;
    return estado.fichas >= 1;
  }

  private comecar(estado: Origem): void {
    estado.ativos += 1;
    if (Number.isFinite(estado.fichas)) estado.fichas -= 1;
  }

  /** Gives turns to waiting jobs while the limits allow; when only the rate stops them, wakes up for the next token. */
  private despachar(origem: string, estado: Origem): void {
    while (estado.esperando.length > 0 && this.podeComecar(origem, estado)) {
      const proximo = estado.esperando.shift()!;
      clearTimeout(proximo.timer);
      this.comecar(estado);
      proximo.resolve(this.liberador(origem, estado));
    }
    const { concorrencia, porSegundo } = this.limites(origem);
    if (estado.esperando.length > 0 && porSegundo !== null && estado.ativos < concorrencia && !estado.despertador) {
      const ms = Math.max(1, ((1 - estado.fichas) / porSegundo) * 1000);
      estado.despertador = setTimeout(() => {
        estado.despertador = undefined;
        this.despachar(origem, estado);
      }, ms);
    }
    // Forgotten when idle, unless its bucket is still refilling (forgetting would refill it at once).
    const cheio =
      porSegundo === null || estado.fichas + ((this.agora() - estado.enchidoEm) / 1000) * porSegundo >= porSegundo;
    if (estado.ativos === 0 && estado.esperando.length === 0 && !estado.despertador && cheio)
      this.origens.delete(origem);
  }

  private liberador(origem: string, estado: Origem): () => void {
    let liberado = false;
    return () => {
      if (liberado) return;
      liberado = true;
      estado.ativos -= 1;
      this.despachar(origem, estado);
    };
  }
}
