import { auth, type Contexto, criarTipo, encerrarContexto, iniciarContexto } from '../../contexto.test-support';

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
      { caminho: '/esquema/$defs/a12', mensagem: expect.stringContaining('more than 10000 checks') },
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

  test('When 20,000 valid items would each be checked against the 8,191 subschemas of a wide schema (an anyOf of 90 anyOf of 90 constants), then /validar refuses the dados at once naming /dados, instead of holding the hub for a minute (or, failing, until it runs out of memory)', async () => {
    const largo = {
      type: 'array',
      items: {
        anyOf: Array.from({ length: 90 }, (_, k) => ({
          anyOf: Array.from({ length: 90 }, (_, j) => ({ const: k * 100 + j })),
        })),
      },
    };
    const versao = (await registrar(largo)).body;
    const validar = (dados: unknown) =>
      ctx.api().post(`/versao-de-esquema/${versao.id}/validar`).set(auth(ctx.todas)).send({ dados });
    for (const item of [8989, -1]) {
      const resposta = await validar(Array.from({ length: 20_000 }, () => item));
      expect(resposta.body).toEqual({
        valido: false,
        erros: [{ caminho: '/dados', mensagem: expect.stringContaining('has too many values for this schema') }],
      });
    }
    // Fewer values are validated as usual.
    expect((await validar([0, 8989, 4512])).body).toEqual({ valido: true, erros: [] });
    expect((await validar([8989, -1])).body.erros[0]).toEqual({
      caminho: '/dados/1',
      mensagem: 'must be equal to constant',
    });
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

  const consts = (n: number) => Array.from({ length: n }, (_, i) => ({ const: i }));
  const validar = (versaoId: string, dados: unknown) =>
    ctx.api().post(`/versao-de-esquema/${versaoId}/validar`).set(auth(ctx.todas)).send({ dados });
  const ORCAMENTO = { caminho: '/dados', mensagem: expect.stringContaining('has too many values for this schema') };

  test('When 20,000 items meet an anyOf of 500 (or 5,000) consts, then /validar refuses the body for its cost, without running it', async () => {
    for (const largura of [500, 5_000]) {
      const versao = await registrar({ type: 'array', items: { anyOf: consts(largura) } });
      expect(versao.status).toBe(201);
      for (const item of [-1, largura - 1]) {
        const resposta = await validar(
          versao.body.id,
          Array.from({ length: 20_000 }, () => item),
        );
        expect(resposta.body).toEqual({ valido: false, erros: [ORCAMENTO] });
      }
      // The same schema still validates a body it can check within the budget.
      expect((await validar(versao.body.id, [largura - 1, 0])).body).toEqual({ valido: true, erros: [] });
    }
  });

  test('When an event of 20,000 items over the budget is published, then 422 dados_invalidos names the cost and nothing is stored', async () => {
    const tipo = await criarTipo(ctx);
    const versao = await ctx
      .api()
      .post('/versao-de-esquema')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: tipo.id, esquema: { type: 'array', items: { anyOf: consts(500) } } });
    const publicar = (dados: unknown) =>
      ctx.api().post('/evento').set(auth(ctx.todas)).send({
        tipo_de_evento_id: tipo.id,
        versao_do_esquema: versao.body.versao,
        entidade_id: 'lote-1',
        dados,
      });
    const antes = await ctx.hub.db.evento.count();
    const resposta = await publicar(Array.from({ length: 20_000 }, () => 499));
    expect(resposta.status).toBe(422);
    expect(resposta.body).toMatchObject({ codigo: 'dados_invalidos', erros: [ORCAMENTO] });
    expect(await ctx.hub.db.evento.count()).toBe(antes);
    expect((await publicar([499, 0])).status).toBe(201);
  });

  test('When 20,000 items meet an anyOf of 20 consts (within the budget), then valid bodies pass and one bad item is named', async () => {
    const versao = (await registrar({ type: 'array', items: { anyOf: consts(20) } })).body;
    const itens = Array.from({ length: 20_000 }, (_, i) => i % 20);
    expect((await validar(versao.id, itens)).body).toEqual({ valido: true, erros: [] });
    itens[19_999] = 20;
    const resposta = await validar(versao.id, itens);
    expect(resposta.body.valido).toBe(false);
    expect(resposta.body.erros).toContainEqual({ caminho: '/dados/19999', mensagem: 'must match a schema in anyOf' });
    expect(resposta.body.erros.length).toBeLessThanOrEqual(50);
    for (const erro of resposta.body.erros) expect(erro.caminho).toBe('/dados/19999');
  });

  test('When 20,000 small items each break the schema, then the first 50 errors are listed', async () => {
    const versao = (await registrar({ type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'null' }] } })).body;
    const resposta = await validar(
      versao.id,
      Array.from({ length: 20_000 }, () => 'x'),
    );
    expect(resposta.body.valido).toBe(false);
    expect(resposta.body.erros).toHaveLength(50);
    expect(resposta.body.erros[0]).toEqual({ caminho: '/dados/0', mensagem: 'must be integer' });
  });

  test('When the widths a value is checked against are large (2,000 properties, 200 patterns), then 20,000 values of them are refused for their cost', async () => {
    const largo = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`p${i}`, { type: 'string' }]));
    const porPropriedades = (await registrar({ type: 'array', items: { type: 'object', properties: largo } })).body;
    expect(
      (
        await validar(
          porPropriedades.id,
          Array.from({ length: 20_000 }, () => ({})),
        )
      ).body,
    ).toEqual({
      valido: false,
      erros: [ORCAMENTO],
    });
    expect((await validar(porPropriedades.id, [{ p1: 'a' }, {}])).body).toEqual({ valido: true, erros: [] });

    const padroes = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`^k${i}_`, { type: 'integer' }]));
    const porPadroes = (await registrar({ type: 'object', patternProperties: padroes })).body;
    const chaves = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 0]));
    expect((await validar(porPadroes.id, chaves)).body).toEqual({ valido: false, erros: [ORCAMENTO] });
    expect((await validar(porPadroes.id, { k1_a: 1 })).body).toEqual({ valido: true, erros: [] });
  });

  test('When one value alone would cost more than the limit (an anyOf of 10,001 consts), then registration is 422', async () => {
    const response = await registrar({ type: 'array', items: { anyOf: consts(10_001) } });
    expect(response.status).toBe(422);
    expect(response.body.erros).toEqual([{ caminho: '/esquema/items', mensagem: expect.stringContaining('checks') }]);
  });
});
