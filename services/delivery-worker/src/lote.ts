import { GroupCommit, type GroupCommitOptions } from '@hub/database';

/**
 * The worker's group commit (@hub/database's GroupCommit): the jobs handed in during one turn of the
 * event loop go together even when idle, and a failed batch's items are tried again all at once (they
 * are independent). At most `paralelos` flushes run together, each of at most `maximo` items.
 */
export class Lote<I, O> extends GroupCommit<I, O> {
  constructor(
    executar: (itens: I[]) => Promise<O[]>,
    options: Pick<GroupCommitOptions, 'maximo' | 'paralelos' | 'espacamento' | 'aoEsvaziar'> = {},
  ) {
    super(executar, { maximo: 500, paralelos: 2, ...options, inicio: 'fim-do-turno', repeticao: 'juntos' });
  }
}
