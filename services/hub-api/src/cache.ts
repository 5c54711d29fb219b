/**
 * A read-through cache for lookups on the publication path (architecture §5: subscriptions per type and
 * version, the application by client id). Writes in this process drop it at once (`esquecer`, called
 * after their commit); writes of any process (another replica, the delivery worker) drop it when
 * their NOTIFY arrives (start.ts). The short life is only a backstop, for a notification lost while
 * the LISTEN connection was away (and the reconnection drops everything as well).
 */
export class CacheDeLeitura<V> {
  private readonly entradas = new Map<string, { valor: Promise<V>; expiraEm: number }>();

  constructor(
    private readonly vidaMs: number,
    private readonly max = 10_000,
  ) {}

  obter(chave: string, carregar: () => Promise<V>): Promise<V> {
    const agora = Date.now();
    const entrada = this.entradas.get(chave);
    if (entrada && entrada.expiraEm > agora) return entrada.valor;
    const valor = carregar();
    if (this.vidaMs <= 0) return valor;
    // The promise itself is kept, so concurrent misses share one query.
    this.entradas.delete(chave);
    this.entradas.set(chave, { valor, expiraEm: agora + this.vidaMs });
    if (this.entradas.size > this.max) this.entradas.delete(this.entradas.keys().next().value!);
    valor.catch(() => {
      if (this.entradas.get(chave)?.valor === valor) this.entradas.delete(chave);
    });
    return valor;
  }

  /** Drops everything: writes are rare, and a wrong entry would send deliveries to the wrong place. */
  esquecer(): void {
    this.entradas.clear();
  }
}

/**
 * The service with `esquecer` called after each of `escritas` settles (after its transaction has
 * committed or failed): a read-through cache of what the service writes is dropped only once the
 * write is visible, so a concurrent miss cannot reload the old row after the drop.
 */
export function esquecendoApos<S extends object, K extends keyof S>(
  servico: S,
  escritas: K[],
  esquecer: () => void,
): S {
  const envolvido = { ...servico };
  for (const nome of escritas) {
    const original = servico[nome] as unknown as (...args: unknown[]) => Promise<unknown>;
    envolvido[nome] = ((...args: unknown[]) => original(...args).finally(esquecer)) as S[K];
  }
  return envolvido;
}
