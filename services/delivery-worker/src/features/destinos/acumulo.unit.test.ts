import { Acumulo } from './acumulo';

const acumulo = (profundidade = 0, adiamentosParaIsolar = 3, acumuloParaIsolar = 100) => {
  const fila = jest.fn(async () => profundidade);
  return { a: new Acumulo({ adiamentosParaIsolar, acumuloParaIsolar, profundidade: fila }), fila };
};

describe('backlog (fair scheduling)', () => {
  test('When an origin reaches the deferrals threshold, then it says so once, at that deferral', () => {
    const { a } = acumulo();
    expect([a.anotarAdiamento('o'), a.anotarAdiamento('o'), a.anotarAdiamento('o'), a.anotarAdiamento('o')]).toEqual([
      false,
      false,
      true,
      false,
    ]);
  });

  test('When an origin was deferred enough within the pass, then it is a target; a new pass forgets it', async () => {
    const { a } = acumulo();
    for (let i = 0; i < 3; i += 1) a.anotarAdiamento('lento');
    a.anotarAdiamento('outro');
    expect(await a.alvos()).toEqual(new Set(['lento']));
    expect(a.adiada('outro')).toBe(true);
    a.recomecar();
    expect(await a.alvos()).toEqual(new Set());
    expect(a.adiada('lento')).toBe(false);
  });

  test('When one origin takes half of a deep shared queue, then it is a target', async () => {
    const { a } = acumulo(150);
    for (let i = 0; i < 5; i += 1) a.anotarTrabalho('grande');
    for (let i = 0; i < 5; i += 1) a.anotarTrabalho(`pequena-${i}`);
    expect(await a.alvos()).toEqual(new Set(['grande']));
  });

  test('When the shared queue is shallow, or no origin takes half of it, then nothing is a target', async () => {
    const raso = acumulo(99);
    for (let i = 0; i < 9; i += 1) raso.a.anotarTrabalho('grande');
    raso.a.anotarTrabalho('outra');
    expect(await raso.a.alvos()).toEqual(new Set());
    const espalhado = acumulo(1_000);
    for (const o of ['a', 'a', 'b', 'c', 'd']) espalhado.a.anotarTrabalho(o);
    expect(await espalhado.a.alvos()).toEqual(new Set());
    // the queue is not even looked at when nobody takes half of it
    expect(espalhado.fila).not.toHaveBeenCalled();
  });

  test('When a single origin has every job, then it is not a backlog of the shared queue (nobody waits behind it)', async () => {
    const { a, fila } = acumulo(1_000);
    for (let i = 0; i < 10; i += 1) a.anotarTrabalho('so');
    expect(await a.alvos()).toEqual(new Set());
    expect(fila).not.toHaveBeenCalled();
  });

  test('When the thresholds are 0, then nothing is ever a target', async () => {
    const { a } = acumulo(1_000, 0, 0);
    for (let i = 0; i < 10; i += 1) expect(a.anotarAdiamento('o')).toBe(false);
    a.anotarTrabalho('o');
    a.anotarTrabalho('p');
    expect(await a.alvos()).toEqual(new Set());
  });
});
