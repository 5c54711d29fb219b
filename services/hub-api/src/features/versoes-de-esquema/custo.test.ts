import { auth, type Contexto, criarTipo, encerrarContexto, iniciarContexto } from '../../test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

async function registrar(esquema: Record<string, unknown>) {
  const tipo = await criarTipo(ctx);
  return ctx.api().post('/versao-de-esquema').set(auth(ctx.todas)).send({ tipo_de_evento_id: tipo.id, esquema });
}

/** `a0` a string; each `a<k>` either of two references to `a<k-1>`: 2^n paths for one value. */
function leque(n: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = { a0: { type: 'string' } };
  for (let k = 1; k <= n; k++)
    $defs[`a${k}`] = { anyOf: [{ $ref: `#/$defs/a${k - 1}` }, { $ref: `#/$defs/a${k - 1}` }] };
  return { $defs, $ref: `#/$defs/a${n}` };
}

const ARRAY_DE_OBJETOS = {
  type: 'object',
  properties: { itens: { type: 'array', uniqueItems: true, items: { type: 'object' } } },
};

describe('schemas that would hold the hub while validating', () => {
  test('When references fan out (2^30 paths for one value), then POST /versao-de-esquema is 422 naming where in the schema', async () => {
    const response = await registrar(leque(30));
    expect(response.status).toBe(422);
    expect(response.body.erros).toEqual([
      { caminho: '/esquema/$defs/a12', mensagem: expect.stringContaining('more than 10000 subschemas') },
    ]);
  });

  test('When a recursion descends twice per level (items and contains to "#"), then 422 at the subschema that doubles', async () => {
    const response = await registrar({
      anyOf: [{ type: 'integer' }, { type: 'array', items: { $ref: '#' }, contains: { $ref: '#' } }],
    });
    expect(response.status).toBe(422);
    expect(response.body.erros).toEqual([{ caminho: '/esquema/anyOf/1', mensagem: expect.any(String) }]);
  });

  test('When schemas recurse once per level (a tree, any JSON value) or fan out a little, then they are registered', async () => {
    for (const esquema of [
      leque(10),
      { type: 'object', properties: { nome: { type: 'string' }, filhos: { type: 'array', items: { $ref: '#' } } } },
      {
        anyOf: [
          { type: ['string', 'number', 'boolean', 'null'] },
          { type: 'array', items: { $ref: '#' } },
          { type: 'object', additionalProperties: { $ref: '#' } },
        ],
      },
      ARRAY_DE_OBJETOS,
    ])
      expect((await registrar(esquema)).status).toBe(201);
  });

  test('When uniqueItems covers 20,000 objects, then /validar answers valido; the first repeated at the end is named', async () => {
    const versao = (await registrar(ARRAY_DE_OBJETOS)).body;
    const itens = Array.from({ length: 20_000 }, (_, i) => ({ id: i, nome: `item ${i}`, tags: [i % 7, 'x'] }));
    const validar = (dados: unknown) =>
      ctx.api().post(`/versao-de-esquema/${versao.id}/validar`).set(auth(ctx.todas)).send({ dados });
    expect((await validar({ itens })).body).toEqual({ valido: true, erros: [] });
    const repetido = await validar({ itens: [...itens, { tags: [0, 'x'], nome: 'item 0', id: 0 }] });
    expect(repetido.body).toEqual({
      valido: false,
      erros: [
        { caminho: '/dados/itens', mensagem: 'must NOT have duplicate items (items ## 0 and 20000 are identical)' },
      ],
    });
  });
});
