import {
  auth,
  type Contexto,
  criarAplicativo,
  encerrarContexto,
  iniciarContexto,
  unico,
} from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

const post = (path: string, body: Record<string, unknown>) => ctx.api().post(path).set(auth(ctx.todas)).send(body);

describe('names and descriptions of the registry', () => {
  test('When an application name is only a zero-width space or other invisible characters, then 422 at /nome', async () => {
    for (const nome of ['\u200B', ' \u200B\uFEFF ', '\u00AD', '\u2800', '\u0301']) {
      const response = await post('/aplicativo', { nome, client_id: unico('app') });
      expect({ nome, status: response.status, erros: response.body.erros }).toEqual({
        nome,
        status: 422,
        erros: [{ caminho: '/nome', mensagem: expect.any(String) }],
      });
    }
    const criado = await criarAplicativo(ctx, 'Válido');
    const patch = await ctx.api().patch(`/aplicativo/${criado.id}`).set(auth(ctx.todas)).send({ nome: '\u200B' });
    expect(patch.status).toBe(422);
  });

  test('When an application name comes decomposed (NFD) with spaces around, then it is stored trimmed and composed (NFC)', async () => {
    const response = await post('/aplicativo', { nome: '  Loja Te\u0301cnica ', client_id: unico('app') });
    expect(response.status).toBe(201);
    expect(response.body.nome).toBe('Loja T\u00E9cnica');
  });

  test('When a type description comes decomposed with spaces around, then it is stored trimmed and NFC; blank is null', async () => {
    const dono = await criarAplicativo(ctx, 'Dono');
    const response = await post('/tipo-de-evento', {
      nome: `${unico('pedido')}.criado`,
      aplicativo_id: dono.id,
      descricao: '\n  Pedido cria\u0300do e\u0301 conclui\u0301do  \t',
    });
    expect(response.status).toBe(201);
    expect(response.body.descricao).toBe('Pedido cri\u00E0do \u00E9 conclu\u00EDdo');
    const vazia = await ctx
      .api()
      .patch(`/tipo-de-evento/${response.body.id}`)
      .set(auth(ctx.todas))
      .send({ descricao: '  ' });
    expect(vazia.body.descricao).toBeNull();
  });

  test('When a type name holds a zero-width space or capitals, then 422: type names stay dotted lower-case identifiers', async () => {
    const dono = await criarAplicativo(ctx, 'Dono');
    for (const nome of [`${unico('pedido')}.criado\u200B`, `${unico('Pedido')}.Criado`]) {
      expect((await post('/tipo-de-evento', { nome, aplicativo_id: dono.id })).status).toBe(422);
    }
  });
});
