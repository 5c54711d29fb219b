import fc from 'fast-check';
import { GroupCommit, type GroupCommitOptions } from './group-commit';

/**
 * GroupCommit's promises under random timings and options (fast-check): whatever the options, the
 * arrival pattern, the statements' durations and which items a statement refuses,
 * - no item is lost: every item settles, a good one with its own output, a bad one with its error;
 * - order: the statements start with the items in their order of arrival, retries aside;
 * - no statement carries more than `maximo` items, nor do more than `paralelos` run at once (with
 *   the retries of a failed batch 'juntos', its items alone beside each other);
 * - bounded wait: with a spacing, an idle item waits exactly the spacing, an urgent one nothing.
 */

interface Caso {
  options: GroupCommitOptions;
  /** Per item: its wait before it is added (ms), whether it is bad (its statement fails), urgent. */
  itens: { antes: number; ruim: boolean; urgente: boolean }[];
  /** Each statement's duration (ms), taken in turn. */
  duracoes: number[];
  /** Whether a failed batch is the database's doing (naoRepetir: none tried alone). */
  foraDoItem: boolean;
}

const caso: fc.Arbitrary<Caso> = fc.record({
  options: fc.record({
    maximo: fc.integer({ min: 1, max: 8 }),
    paralelos: fc.integer({ min: 1, max: 3 }),
    inicio: fc.constantFrom('imediato' as const, 'fim-do-turno' as const),
    repeticao: fc.constantFrom('em-ordem' as const, 'juntos' as const),
    escalonarApos: fc.constantFrom(0, 2, 5),
    espacamento: fc.constantFrom(0, 3, 8),
  }),
  itens: fc.array(
    fc.record({
      antes: fc.constantFrom(0, 0, 1, 3),
      ruim: fc.integer({ min: 0, max: 99 }).map((n) => n < 15),
      urgente: fc.boolean(),
    }),
    { minLength: 1, maxLength: 25 },
  ),
  duracoes: fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 10 }),
  foraDoItem: fc.integer({ min: 0, max: 99 }).map((n) => n < 20),
});

const esperar = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function correr(c: Caso) {
  const ruins = new Set(c.itens.flatMap((item, i) => (item.ruim ? [i] : [])));
  const lotes: number[][] = [];
  let emVoo = 0;
  let maisEmVoo = 0;
  let chamada = 0;
  const erroDoBanco = new Error('the database is away');
  const gc = new GroupCommit<number, string>(
    async (itens) => {
      lotes.push(itens);
      emVoo += 1;
      maisEmVoo = Math.max(maisEmVoo, emVoo);
      try {
        await esperar(c.duracoes[chamada++ % c.duracoes.length]!);
        if (itens.some((i) => ruins.has(i)))
          throw itens.length > 1 && c.foraDoItem ? erroDoBanco : new Error(`bad ${itens}`);
        return itens.map((i) => `saida-${i}`);
      } finally {
        emVoo -= 1;
      }
    },
    { ...c.options, naoRepetir: (erro) => erro === erroDoBanco },
  );
  const resultados: Promise<{ i: number; saida?: string; erro?: unknown }>[] = [];
  for (const [i, item] of c.itens.entries()) {
    if (item.antes > 0) await esperar(item.antes);
    resultados.push(
      gc.add(i, item.urgente).then(
        (saida) => ({ i, saida }),
        (erro) => ({ i, erro }),
      ),
    );
  }
  const settled = await Promise.all(resultados);
  return { ruins, lotes, maisEmVoo, settled };
}

test('GroupCommit loses no item, keeps the order of arrival and stays within maximo and paralelos, under random timings, options and failures', async () => {
  await fc.assert(
    fc.asyncProperty(caso, async (c) => {
      const { ruins, lotes, maisEmVoo, settled } = await correr(c);
      // No item lost, each with its own answer.
      expect(settled.map((s) => s.i)).toEqual(c.itens.map((_item, i) => i));
      for (const s of settled) {
        if (!ruins.has(s.i)) {
          // A good item fails only with a batch the database itself failed (naoRepetir).
          if (s.erro !== undefined) expect((s.erro as Error).message).toBe('the database is away');
          else expect(s.saida).toBe(`saida-${s.i}`);
        } else expect(s.erro).toBeInstanceOf(Error);
      }
      // The first statement of each item, in the order statements started: the order of arrival.
      const vistos = new Set<number>();
      const primeiras: number[] = [];
      for (const lote of lotes)
        for (const i of lote)
          if (!vistos.has(i)) {
            vistos.add(i);
            primeiras.push(i);
          }
      expect(primeiras).toEqual(c.itens.map((_item, i) => i));
      expect(Math.max(...lotes.map((l) => l.length))).toBeLessThanOrEqual(c.options.maximo!);
      // Retries of a failed batch ('juntos') run beside nothing else of that flush's slot but themselves.
      const retriesAtOnce = c.options.repeticao === 'juntos' ? c.options.maximo! : 1;
      expect(maisEmVoo).toBeLessThanOrEqual(c.options.paralelos! * retriesAtOnce);
    }),
    { numRuns: 60 },
  );
}, 60_000);

test('GroupCommit with a spacing: an idle item waits the spacing and no longer, an urgent one not at all', async () => {
  jest.useFakeTimers();
  try {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 50 }), fc.boolean(), async (espacamento, urgente) => {
        let statements = 0;
        const gc = new GroupCommit<number, number>(
          async (itens) => {
            statements += 1;
            return itens;
          },
          { espacamento },
        );
        await gc.add(0);
        const segundo = gc.add(1, urgente);
        await jest.advanceTimersByTimeAsync(urgente ? 0 : espacamento - 1);
        expect(statements).toBe(urgente ? 2 : 1);
        await jest.advanceTimersByTimeAsync(1);
        expect(statements).toBe(2);
        await expect(segundo).resolves.toBe(1);
      }),
      { numRuns: 30 },
    );
  } finally {
    jest.useRealTimers();
  }
});
