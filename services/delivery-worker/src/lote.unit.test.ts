import { proximoAtraso } from './features/entregas/atrasos';
import { Lote } from './lote';

describe('Lote (group commit)', () => {
  it('When items arrive together, then they go in one batch; when a batch fails, each item is tried alone and only the bad one fails', async () => {
    const lotes: string[][] = [];
    const lote = new Lote<string, string>(async (itens) => {
      lotes.push(itens);
      if (itens.includes('mau')) throw new Error(`recusado: ${itens.join(',')}`);
      return itens.map((i) => i.toUpperCase());
    });
    const resultados = await Promise.allSettled(['a', 'mau', 'b'].map((i) => lote.add(i)));
    expect(resultados.map((r) => (r.status === 'fulfilled' ? r.value : 'falhou'))).toEqual(['A', 'falhou', 'B']);
    expect(lotes[0]).toEqual(['a', 'mau', 'b']);
    expect(lotes.slice(1).sort()).toEqual([['a'], ['b'], ['mau']]);
  });
});

describe('proximoAtraso', () => {
  const passos = [5_000, 30_000, 120_000];

  it('When attempts fail, then each waits in the step of its attempt, the last repeating, jittered within 75–100 % of it', () => {
    expect(proximoAtraso(1, passos, undefined, () => 0)).toEqual({ passoMs: 5_000, expiracaoMs: 3_750 });
    expect(proximoAtraso(2, passos, undefined, () => 1)).toEqual({ passoMs: 30_000, expiracaoMs: 30_000 });
    expect(proximoAtraso(9, passos, undefined, () => 0.5).passoMs).toBe(120_000);
  });

  it('When the receiver asks for Retry-After, then the wait is at least that, in a step that holds it, bounded by the longest step', () => {
    expect(proximoAtraso(1, passos, 20_000, () => 0)).toEqual({ passoMs: 30_000, expiracaoMs: 20_000 });
    expect(proximoAtraso(1, passos, 3_600_000, () => 0)).toEqual({ passoMs: 120_000, expiracaoMs: 120_000 });
    // A Retry-After shorter than the step's own wait changes nothing.
    expect(proximoAtraso(2, passos, 1_000, () => 0)).toEqual({ passoMs: 30_000, expiracaoMs: 22_500 });
  });
});
