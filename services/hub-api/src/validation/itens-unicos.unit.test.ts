import { Compilador } from './compilacao';
import { ValidadorDeEsquemas } from './esquemas';

const compilador = new Compilador({ limiteMs: 60_000 });
afterAll(() => compilador.encerrar());

/** A validator with one array schema registered under `id` (at its first use). */
function comEsquema(esquema: Record<string, unknown>) {
  const validador = new ValidadorDeEsquemas({ compilador });
  let registro: Promise<void> | undefined;
  const registrar = async () => {
    const { erros, validador: compilado } = await validador.verificarEsquema(esquema);
    expect(erros).toEqual([]);
    validador.lembrar('v', compilado!);
  };
  return async (dados: unknown) => {
    registro ??= registrar();
    await registro;
    return validador.validarDados({ id: 'v', esquema }, dados);
  };
}

describe('uniqueItems (compared in linear time)', () => {
  const qualquer = comEsquema({ type: 'array', uniqueItems: true });

  it('When two items are the same JSON value written differently (keys in another order, 1 and 1.0, 0 and -0), then they are duplicates', async () => {
    for (const dados of [
      [
        { a: 1, b: [1, { c: null }] },
        { b: [1, { c: null }], a: 1 },
      ],
      [1, 1.0],
      [0, -0],
      [[], []],
      [{}, {}],
      ['x', 'x'],
      [null, null],
    ])
      expect(await qualquer(dados)).toEqual({
        valido: false,
        erros: [{ caminho: '/dados', mensagem: 'must NOT have duplicate items (items ## 0 and 1 are identical)' }],
      });
  });

  it('When items differ in type, order or a nested value, then they are unique', async () => {
    for (const dados of [
      [1, '1', true, 'true', null, 'null', [], {}, [1], { 0: 1 }, ['1'], [null], [[]], [{}]],
      [
        [1, 2],
        [2, 1],
      ],
      [{ a: { b: 1 } }, { a: { b: 2 } }, { a: { c: 1 } }, { b: { a: 1 } }],
      [{ a: 'b' }, { b: 'a' }, { a: 'b', b: 'a' }],
    ])
      expect(await qualquer(dados)).toEqual({ valido: true, erros: [] });
  });

  it('When "__proto__" or "constructor" appear twice among string items, then they are duplicates (ajv\'s own shortcut let them through)', async () => {
    const textos = comEsquema({ type: 'array', uniqueItems: true, items: { type: 'string' } });
    expect((await textos(['__proto__', '__proto__'])).valido).toBe(false);
    expect((await textos(['constructor', 'x', 'constructor'])).erros).toEqual([
      { caminho: '/dados', mensagem: 'must NOT have duplicate items (items ## 0 and 2 are identical)' },
    ]);
  });

  it('When arrays with uniqueItems nest, then each level is checked and errors point at the nested array', async () => {
    const aninhado = comEsquema({
      type: 'object',
      properties: { listas: { type: 'array', uniqueItems: true, items: { type: 'array', uniqueItems: true } } },
    });
    expect((await aninhado({ listas: [[1, 2], [2, 1], []] })).valido).toBe(true);
    expect(
      (
        await aninhado({
          listas: [
            [1, 2],
            [2, 1],
            [1, 2],
          ],
        })
      ).erros,
    ).toEqual([
      { caminho: '/dados/listas', mensagem: 'must NOT have duplicate items (items ## 0 and 2 are identical)' },
    ]);
    expect((await aninhado({ listas: [[1], [2, 2]] })).erros).toEqual([
      { caminho: '/dados/listas/1', mensagem: 'must NOT have duplicate items (items ## 0 and 1 are identical)' },
    ]);
  });

  it('When uniqueItems is false, or the draft is draft-07, then it behaves as the keyword says', async () => {
    expect((await comEsquema({ type: 'array', uniqueItems: false })([1, 1])).valido).toBe(true);
    const draft07 = comEsquema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'array',
      uniqueItems: true,
    });
    expect((await draft07([{ a: 1 }, { a: 1 }])).valido).toBe(false);
    expect((await draft07([{ a: 1 }, { a: 2 }])).valido).toBe(true);
  });

  it('When 20,000 distinct objects are under uniqueItems, then they are valid; the first repeated at the end, keys in another order, is named', async () => {
    const objetos = comEsquema({ type: 'array', uniqueItems: true, items: { type: 'object' } });
    const itens = Array.from({ length: 20_000 }, (_, i) => ({ id: i, nome: `n${i}`, tags: [i % 7] }));
    expect(await objetos(itens)).toEqual({ valido: true, erros: [] });
    expect((await objetos([...itens, { tags: [0], nome: 'n0', id: 0 }])).erros).toEqual([
      { caminho: '/dados', mensagem: 'must NOT have duplicate items (items ## 0 and 20000 are identical)' },
    ]);
  });
});
