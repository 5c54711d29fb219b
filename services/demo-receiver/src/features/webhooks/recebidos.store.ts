/** A delivery that verified, as GET /recebidos shows it. */
export interface Recebido {
  webhook_id: string;
  /** When the hub signed it (webhook-timestamp), ISO. */
  assinado_em: string;
  recebido_em: string;
  /** The JWKS key whose signature matched. */
  chave_id: string | null;
  corpo: unknown;
}

/**
 * The last deliveries, in memory. Ids are remembered far longer than bodies are kept, so a retry
 * of an old delivery is still recognised as a repeat (what a real subscriber does with a table).
 */
export class RecebidosStore {
  private readonly kept: Recebido[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly keep = 100,
    private readonly rememberIds = 10_000,
  ) {}

  /** Stores a delivery once; false when its webhook-id was seen before. */
  add(recebido: Recebido): boolean {
    if (this.seen.has(recebido.webhook_id)) return false;
    this.seen.add(recebido.webhook_id);
    if (this.seen.size > this.rememberIds) this.seen.delete(this.seen.values().next().value!);
    this.kept.unshift(recebido);
    if (this.kept.length > this.keep) this.kept.pop();
    return true;
  }

  /** Newest first. */
  list(): Recebido[] {
    return [...this.kept];
  }
}
