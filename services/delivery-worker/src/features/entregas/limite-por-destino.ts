/** The worker is stopping: a job waiting for its turn goes back to the queue. */
export class Parando extends Error {
  override name = 'Parando';
}

interface Origem {
  ativos: number;
  esperando: { resolve: (liberar: () => void) => void; reject: (e: unknown) => void }[];
}

/**
 * At most `limite` POSTs under way per origin. A job over the limit waits in memory while at most
 * `limite` others of its origin wait too; beyond that `entrar` answers null and the caller defers the
 * job (through the shortest delay queue), so a slow origin holds at most 2 × limite of the prefetch
 * and jobs of other origins keep flowing.
 */
export class LimitePorDestino {
  private readonly origens = new Map<string, Origem>();

  constructor(
    private readonly limite: number,
    private readonly maxEsperando = limite,
  ) {}

  /** A turn (call the function it gives when the POST is over), or null when the origin is saturated. */
  entrar(origem: string): Promise<() => void> | null {
    let estado = this.origens.get(origem);
    if (!estado) {
      estado = { ativos: 0, esperando: [] };
      this.origens.set(origem, estado);
    }
    if (estado.ativos < this.limite) {
      estado.ativos += 1;
      return Promise.resolve(this.liberador(origem, estado));
    }
    if (estado.esperando.length >= this.maxEsperando) return null;
    const alvo = estado;
    return new Promise((resolve, reject) => alvo.esperando.push({ resolve, reject }));
  }

  /** POSTs under way to an origin (metrics, tests). */
  ativos(origem: string): number {
    return this.origens.get(origem)?.ativos ?? 0;
  }

  /** Every job still waiting for its turn is told to go back (Parando). */
  dispensarEsperas(): void {
    for (const estado of this.origens.values()) {
      for (const espera of estado.esperando.splice(0)) espera.reject(new Parando('the worker is stopping'));
    }
  }

  private liberador(origem: string, estado: Origem): () => void {
    let liberado = false;
    return () => {
      if (liberado) return;
      liberado = true;
      const proximo = estado.esperando.shift();
      if (proximo) {
        proximo.resolve(this.liberador(origem, estado));
        return;
      }
      estado.ativos -= 1;
      if (estado.ativos === 0) this.origens.delete(origem);
    };
  }
}
