/**
 * Group commit (a batch that fails is tried again item by item, so one bad item fails alone): items handed in while a flush is under way wait and go together in the next one,
 * so under load one statement serves many jobs and when idle an item goes at once. At most
 * `paralelos` flushes run together, each of at most `maximo` items.
 */
export class Lote<I, O> {
  private fila: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private emCurso = 0;
  private agendado = false;

  constructor(
    private readonly executar: (itens: I[]) => Promise<O[]>,
    private readonly maximo = 500,
    private readonly paralelos = 2,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.fila.push({ item, resolve, reject });
      this.agendar();
    });
  }

  private agendar(): void {
    if (this.agendado || this.emCurso >= this.paralelos || this.fila.length === 0) return;
    this.agendado = true;
    // Jobs arriving in the same turn of the event loop go together.
    setImmediate(() => {
      this.agendado = false;
      void this.esvaziar();
    });
  }

  private async esvaziar(): Promise<void> {
    if (this.emCurso >= this.paralelos || this.fila.length === 0) return;
    const vez = this.fila.splice(0, this.maximo);
    this.emCurso += 1;
    try {
      const saidas = await this.executar(vez.map((v) => v.item));
      vez.forEach((v, i) => {
        v.resolve(saidas[i] as O);
      });
    } catch (error) {
      if (vez.length === 1) vez[0]!.reject(error);
      // One bad item must not fail the others with it: each is tried alone.
      else
        await Promise.all(
          vez.map((v) =>
            this.executar([v.item]).then(
              ([saida]) => v.resolve(saida as O),
              (erro: unknown) => v.reject(erro),
            ),
          ),
        );
    } finally {
      this.emCurso -= 1;
      this.agendar();
    }
  }
}
