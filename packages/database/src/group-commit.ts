export interface GroupCommitOptions {
  /** Items per flush at most. */
  maximo?: number;
  /** Flushes in flight at once (connections of the pool the writer may hold). */
  paralelos?: number;
  /**
   * When a flush starts once a slot is free:
   * - 'imediato': at once, with what is waiting; the items arriving meanwhile wait for the next one.
   *   The first item of a quiet moment waits for nothing but its own statement, and the order of
   *   arrival is the order of the statements (publication: the first claimant of an
   *   Idempotency-Key is the one whose statement runs first).
   * - 'fim-do-turno': after the current turn of the event loop, so the items handed in during the
   *   same turn (the jobs of one batch of consumed messages) go together even when idle.
   */
  inicio?: 'imediato' | 'fim-do-turno';
  /**
   * How the items of a failed flush are tried again, each alone:
   * - 'em-ordem': one after the other, in their order of arrival (an item may depend on an earlier
   *   one: the same Idempotency-Key twice, the second has to find the first's committed);
   * - 'juntos': all at once (independent items; a database away costs one timeout, not one each).
   */
  repeticao?: 'em-ordem' | 'juntos';
  /**
   * Whether a batch's failure is none of its items' doing (the database not answering, the
   * connection lost): then every item fails with it at once, none tried alone. Alone each would
   * fail the same way, and 'em-ordem' tries them one after the other: with a database that hangs,
   * one statement timeout per item (the last of 200 answered after 200 of them).
   */
  naoRepetir?: (erro: unknown) => boolean;
  /**
   * Milliseconds the latest flush in flight must have been under way before another may start beside
   * it (0, the default: at once, up to `paralelos`). With it, a steady load is served by one flush at
   * a time, each carrying everything that arrived during the one before (twice the items of two
   * flushes taking turns, and half the statements' fixed costs), while a flush that stalls holds
   * only its own items: the next starts beside it once it is this late.
   */
  escalonarApos?: number;
  /**
   * Milliseconds between the starts of two flushes at least (0, the default: none). Below saturation
   * a writer whose statements run back to back sends a few items in each, and each costs the
   * database and this process about what a full one does: CPU stays as high as at saturation, and on
   * a shared machine every process waits longer for a core. With a spacing the items of that time go
   * together, statements fall to at most 1000 / `espacamento` a second, and CPU falls with the rate.
   * An item waits at most this long more; one added as urgent (`add(item, true)`) waits for none, and
   * takes the items waiting with it. Under load, when a statement takes longer than this, it changes
   * nothing.
   */
  espacamento?: number;
  /** Told the size of each flush as it starts (a metric: how many items one statement serves). */
  aoEsvaziar?: (itens: number) => void;
}

interface Pendente<I, O> {
  item: I;
  resolve: (saida: O) => void;
  reject: (erro: unknown) => void;
  urgente: boolean;
}

/**
 * Group commit, the one mechanism of the platform (architecture §5): items handed in while a flush is
 * under way wait and go together in the next one, so under load one statement, one round trip and
 * one commit (one WAL flush) serve many items, and when idle an item waits for nothing but its own
 * statement. `executar` writes a batch in ONE statement (atomic on its own) and gives one output per
 * item, in order. A batch that fails is tried again item by item, so one bad item fails alone and
 * the others are written. Used by hub-api's publication (its group write) and the delivery worker
 * (its claims, releases and records).
 */
export class GroupCommit<I, O> {
  private readonly fila: Pendente<I, O>[] = [];
  private emCurso = 0;
  private agendado = false;
  /** When the latest flush started (performance.now()), for `escalonarApos` and `espacamento`. */
  private ultimoInicio = Number.NEGATIVE_INFINITY;
  private espera: NodeJS.Timeout | undefined;
  /** When `espera` is due (performance.now()). */
  private esperaAte = 0;
  /** Items waiting that were added as urgent: the spacing is skipped while there is one. */
  private urgentes = 0;
  private readonly maximo: number;
  private readonly paralelos: number;
  private readonly inicio: NonNullable<GroupCommitOptions['inicio']>;
  private readonly repeticao: NonNullable<GroupCommitOptions['repeticao']>;
  private readonly aoEsvaziar: GroupCommitOptions['aoEsvaziar'];
  private readonly naoRepetir: GroupCommitOptions['naoRepetir'];
  private readonly escalonarApos: number;
  private espacamento: number;

  constructor(
    private readonly executar: (itens: I[]) => Promise<O[]>,
    options: GroupCommitOptions = {},
  ) {
    this.maximo = options.maximo ?? 500;
    this.paralelos = options.paralelos ?? 2;
    this.inicio = options.inicio ?? 'imediato';
    this.repeticao = options.repeticao ?? 'em-ordem';
    this.aoEsvaziar = options.aoEsvaziar;
    this.naoRepetir = options.naoRepetir;
    this.escalonarApos = options.escalonarApos ?? 0;
    this.espacamento = options.espacamento ?? 0;
  }

  /**
   * Resolves with the item's output once its flush has committed; rejects when the item alone fails.
   * An urgent item does not wait for the spacing (`espacamento`).
   */
  add(item: I, urgente = false): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.fila.push({ item, resolve, reject, urgente });
      if (urgente) this.urgentes += 1;
      this.agendar();
    });
  }

  /**
   * From now on no flush waits for `espacamento`, and the items waiting for it go at once: a stop,
   * whose drain waits for them (the delivery worker's acks wait for their records).
   */
  semEspacamento(): void {
    if (this.espacamento === 0) return;
    this.espacamento = 0;
    this.cancelarEspera();
    this.agendar();
  }

  private cancelarEspera(): void {
    clearTimeout(this.espera);
    this.espera = undefined;
  }

  private agendar(): void {
    if (this.emCurso >= this.paralelos || this.fila.length === 0) return;
    const apos = Math.max(this.emCurso > 0 ? this.escalonarApos : 0, this.urgentes === 0 ? this.espacamento : 0);
    const ate = this.ultimoInicio + apos;
    const falta = apos > 0 ? ate - performance.now() : 0;
    if (falta > 0) {
      // A wait set for a later time (the spacing, before an urgent item came; escalonarApos, before
      // the flush in flight ended) is shortened to what is asked now.
      if (this.espera && this.esperaAte > ate) this.cancelarEspera();
      if (!this.espera) {
        this.esperaAte = ate;
        this.espera = setTimeout(() => {
          this.espera = undefined;
          this.agendar();
        }, Math.ceil(falta));
      }
      return;
    }
    if (this.inicio === 'imediato') {
      void this.esvaziar();
      return;
    }
    if (this.agendado) return;
    this.agendado = true;
    setImmediate(() => {
      this.agendado = false;
      void this.esvaziar();
    });
  }

  private async esvaziar(): Promise<void> {
    if (this.emCurso >= this.paralelos || this.fila.length === 0) return;
    const vez = this.fila.splice(0, this.maximo);
    for (const v of vez) if (v.urgente) this.urgentes -= 1;
    this.emCurso += 1;
    this.ultimoInicio = performance.now();
    this.cancelarEspera();
    this.aoEsvaziar?.(vez.length);
    try {
      const emVoo = this.executar(vez.map((v) => v.item));
      // An urgent item left behind by `maximo` starts beside this flush when a slot is free (after this
      // flush's statement is sent, keeping their order), instead of waiting for it to end: nothing
      // else looks at the queue before then.
      if (this.urgentes > 0) this.agendar();
      const saidas = await emVoo;
      for (const [i, v] of vez.entries()) v.resolve(saidas[i] as O);
    } catch (error) {
      if (vez.length === 1 || this.naoRepetir?.(error)) for (const v of vez) v.reject(error);
      else if (this.repeticao === 'juntos') await Promise.all(vez.map((v) => this.sozinho(v)));
      else for (const v of vez) await this.sozinho(v);
    } finally {
      this.emCurso -= 1;
      this.agendar();
    }
  }

  private sozinho(v: Pendente<I, O>): Promise<void> {
    this.aoEsvaziar?.(1);
    // Through a promise, so that an `executar` that throws before returning one fails this item
    // instead of escaping the retries (leaving the items after it waiting for ever).
    return Promise.resolve()
      .then(() => this.executar([v.item]))
      .then(([saida]) => v.resolve(saida as O), v.reject);
  }
}
