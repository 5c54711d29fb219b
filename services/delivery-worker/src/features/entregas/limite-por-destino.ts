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
}

/**
 * At most `limite` POSTs under way per origin (scheme://host:port). A job over the limit waits in
 * memory for its turn, at most `esperaMaximaMs`: a destination that answers fast serves its queue
 * from memory (no churn), while the jobs of a stuck one give up their wait and are deferred by the
 * caller (through the shortest delay queue), so they cannot hold the prefetch and starve the
 * other destinations.
 */
export class LimitePorDestino {
  private readonly origens = new Map<string, Origem>();

  constructor(
    private readonly limite: number,
    private readonly esperaMaximaMs: number,
  ) {}

  /** A turn (call the function it gives when the POST is over), or null when the wait ran out. */
  entrar(origem: string): Promise<(() => void) | null> {
    let estado = this.origens.get(origem);
    if (!estado) {
      estado = { ativos: 0, esperando: [] };
      this.origens.set(origem, estado);
    }
    if (estado.ativos < this.limite) {
      estado.ativos += 1;
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
    });
  }

  /** POSTs under way to an origin (metrics, tests). */
  ativos(origem: string): number {
    return this.origens.get(origem)?.ativos ?? 0;
  }

  /** Every job still waiting for its turn is told to go back (Parando). */
  dispensarEsperas(): void {
    for (const estado of this.origens.values()) {
      for (const espera of estado.esperando.splice(0)) {
        clearTimeout(espera.timer);
        espera.reject(new Parando('the worker is stopping'));
      }
    }
  }

  private liberador(origem: string, estado: Origem): () => void {
    let liberado = false;
    return () => {
      if (liberado) return;
      liberado = true;
      const proximo = estado.esperando.shift();
      if (proximo) {
        clearTimeout(proximo.timer);
        proximo.resolve(this.liberador(origem, estado));
        return;
      }
      estado.ativos -= 1;
      if (estado.ativos === 0) this.origens.delete(origem);
    };
  }
}
