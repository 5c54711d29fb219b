import {
  auth,
  type Contexto,
  criarTipo,
  criarVersao,
  encerrarContexto,
  iniciarContexto,
} from '../../contexto.test-support';
import { ValidadorDeEsquemas } from '../../validation/esquemas';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

const ESQUEMA = {
  type: 'object',
  required: ['numero', 'itens'],
  properties: {
    numero: { type: 'string', pattern: '^P-[0-9]+$' },
    cliente: { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email' } } },
    itens: { type: 'array', items: { type: 'integer', minimum: 1 } },
  },
  additionalProperties: false,
};

describe('POST /versao-de-esquema/{id}/validar', () => {
  test('When the sample satisfies the schema, then valido true and no erros', async () => {
    const versao = await criarVersao(ctx, (await criarTipo(ctx)).id, ESQUEMA);
    const response = await ctx
      .api()
      .post(`/versao-de-esquema/${versao.id}/validar`)
      .set(auth(ctx.todas))
      .send({ dados: { numero: 'P-1', itens: [1, 2] } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ valido: true, erros: [] });
  });

  test('When the sample breaks the schema, then every error is listed with a pointer into dados', async () => {
    const versao = await criarVersao(ctx, (await criarTipo(ctx)).id, ESQUEMA);
    const dados = { numero: 'X', cliente: { email: 'nope' }, extra: 1 };
    const response = await ctx
      .api()
      .post(`/versao-de-esquema/${versao.id}/validar`)
      .set(auth(ctx.todas))
      .send({ dados });
    expect(response.body.valido).toBe(false);
    expect(response.body.erros).toEqual(
      expect.arrayContaining([
        { caminho: '/dados/itens', mensagem: 'is required' },
        { caminho: '/dados/extra', mensagem: 'is not an allowed property' },
        { caminho: '/dados/numero', mensagem: 'must match pattern "^P-[0-9]+$"' },
        { caminho: '/dados/cliente/email', mensagem: 'must match format "email"' },
      ]),
    );
  });

  test('When the answer is compared with the function publication uses, then they are the same', async () => {
    const versao = await criarVersao(ctx, (await criarTipo(ctx)).id, ESQUEMA);
    // Another process's validator: the same answers from a validator made at first use.
    const outro = new ValidadorDeEsquemas();
    for (const dados of [{ numero: 'P-9', itens: [] }, { itens: [0, 'a', 2] }, null, 'texto', [1]]) {
      const response = await ctx
        .api()
        .post(`/versao-de-esquema/${versao.id}/validar`)
        .set(auth(ctx.todas))
        .send({ dados });
      expect(response.body).toEqual(await outro.validarDados({ id: versao.id, esquema: ESQUEMA }, dados));
    }
    await outro.encerrar();
  });

  test('When a version is validated many times, then its schema was compiled once, at creation', async () => {
    const antes = ctx.hub.validador.compilacoes;
    const versao = await criarVersao(ctx, (await criarTipo(ctx)).id, ESQUEMA);
    for (let i = 0; i < 5; i++)
      await ctx
        .api()
        .post(`/versao-de-esquema/${versao.id}/validar`)
        .set(auth(ctx.todas))
        .send({ dados: { numero: `P-${i}`, itens: [] } });
    expect(ctx.hub.validador.compilacoes - antes).toBe(1);
  });

  test('When the sample breaks the schema in more than 50 places, then 50 erros are answered', async () => {
    const versao = await criarVersao(ctx, (await criarTipo(ctx)).id, ESQUEMA);
    const dados = { numero: 'P-1', itens: Array.from({ length: 120 }, () => 0) };
    const response = await ctx
      .api()
      .post(`/versao-de-esquema/${versao.id}/validar`)
      .set(auth(ctx.todas))
      .send({ dados });
    expect(response.body.valido).toBe(false);
    expect(response.body.erros).toHaveLength(50);
  });

  test('When the switched-off version is validated, then it still answers (it is a check, not a publication)', async () => {
    const versao = await criarVersao(ctx, (await criarTipo(ctx)).id, ESQUEMA);
    await ctx.api().patch(`/versao-de-esquema/${versao.id}`).set(auth(ctx.todas)).send({ ativa: false });
    const response = await ctx
      .api()
      .post(`/versao-de-esquema/${versao.id}/validar`)
      .set(auth(ctx.todas))
      .send({ dados: { numero: 'P-1', itens: [] } });
    expect(response.body).toEqual({ valido: true, erros: [] });
  });

  test('When dados is missing or the caller may only read, then 422 and 403', async () => {
    const versao = await criarVersao(ctx, (await criarTipo(ctx)).id, ESQUEMA);
    const missing = await ctx.api().post(`/versao-de-esquema/${versao.id}/validar`).set(auth(ctx.todas)).send({});
    expect(missing.status).toBe(422);
    expect(missing.body.erros).toEqual([{ caminho: '/dados', mensagem: expect.any(String) }]);
    expect(
      (await ctx.api().post(`/versao-de-esquema/${versao.id}/validar`).set(auth(ctx.leitor)).send({ dados: {} }))
        .status,
    ).toBe(403);
  });
});
