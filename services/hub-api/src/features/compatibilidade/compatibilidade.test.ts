import {
  auth,
  type Contexto,
  criarTipo,
  criarVersao,
  ESQUEMA_PEDIDO,
  encerrarContexto,
  iniciarContexto,
} from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

const MISSING = '01900000-0000-7000-8000-00000000ffff';
const COM_CAMPO = {
  ...ESQUEMA_PEDIDO,
  required: [...ESQUEMA_PEDIDO.required, 'cliente'],
  properties: { ...ESQUEMA_PEDIDO.properties, cliente: { type: 'string' } },
};

const versoesDe = async (tipoId: string) =>
  (await ctx.api().get('/versao-de-esquema').query({ tipo_de_evento_id: tipoId }).set(auth(ctx.leitor))).body.itens;

describe('tipo_de_evento.compatibilidade', () => {
  test('When a type is created without it, then it is none; POST, PATCH and every read carry it', async () => {
    const padrao = await criarTipo(ctx);
    expect(padrao.compatibilidade).toBe('none');
    const tipo = await criarTipo(ctx, { compatibilidade: 'backward' });
    expect(tipo.compatibilidade).toBe('backward');
    const patch = await ctx
      .api()
      .patch(`/tipo-de-evento/${tipo.id}`)
      .set(auth(ctx.todas))
      .send({ compatibilidade: 'full' });
    expect(patch.status).toBe(200);
    expect(patch.body.compatibilidade).toBe('full');
    const lido = await ctx.api().get(`/tipo-de-evento/${tipo.id}`).set(auth(ctx.leitor));
    expect(lido.body.compatibilidade).toBe('full');
    const filtro = await ctx.api().get('/tipo-de-evento/filtro').query({ nome: tipo.nome }).set(auth(ctx.leitor));
    expect(filtro.body[0].compatibilidade).toBe('full');
  });

  test('When compatibilidade is not one of the four words, then POST and PATCH are 422 and nothing changes', async () => {
    const tipo = await criarTipo(ctx, { compatibilidade: 'forward' });
    const post = await ctx
      .api()
      .post('/tipo-de-evento')
      .set(auth(ctx.todas))
      .send({ nome: 'x.compat.ruim', aplicativo_id: tipo.aplicativo_id, compatibilidade: 'transitive' });
    expect(post.status).toBe(422);
    expect(post.headers['content-type']).toMatch(/application\/problem\+json/);
    const patch = await ctx
      .api()
      .patch(`/tipo-de-evento/${tipo.id}`)
      .set(auth(ctx.todas))
      .send({ compatibilidade: 'BACKWARD' });
    expect(patch.status).toBe(422);
    expect((await ctx.api().get(`/tipo-de-evento/${tipo.id}`).set(auth(ctx.leitor))).body.compatibilidade).toBe(
      'forward',
    );
  });
});

describe('POST /versao-de-esquema under a compatibility rule', () => {
  test('When a backward type gets a version that adds a required property, then 409 esquema_incompativel and nothing is stored', async () => {
    const tipo = await criarTipo(ctx, { compatibilidade: 'backward' });
    await criarVersao(ctx, tipo.id);
    const response = await ctx
      .api()
      .post('/versao-de-esquema')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: tipo.id, esquema: COM_CAMPO });
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ status: 409, codigo: 'esquema_incompativel' });
    expect(response.body.erros).toEqual(
      expect.arrayContaining([{ caminho: '/required', mensagem: 'required property added: cliente' }]),
    );
    expect((await versoesDe(tipo.id)).map((v: { versao: number }) => v.versao)).toEqual([1]);
  });

  test('When the change is compatible (an optional property on a closed object), then the version is created', async () => {
    const tipo = await criarTipo(ctx, { compatibilidade: 'backward' });
    await criarVersao(ctx, tipo.id);
    const esquema = { ...ESQUEMA_PEDIDO, properties: { ...ESQUEMA_PEDIDO.properties, cliente: { type: 'string' } } };
    const segunda = await criarVersao(ctx, tipo.id, esquema);
    expect(segunda.versao).toBe(2);
  });

  test('When the rule is none, then any schema follows; a PATCH to a rule the stored versions break applies to the next', async () => {
    const tipo = await criarTipo(ctx);
    await criarVersao(ctx, tipo.id, COM_CAMPO);
    await criarVersao(ctx, tipo.id, ESQUEMA_PEDIDO);
    const patch = await ctx
      .api()
      .patch(`/tipo-de-evento/${tipo.id}`)
      .set(auth(ctx.todas))
      .send({ compatibilidade: 'forward' });
    expect(patch.status).toBe(200);
    const proxima = await ctx
      .api()
      .post('/versao-de-esquema')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: tipo.id, esquema: { ...ESQUEMA_PEDIDO, required: ['numero'] } });
    expect(proxima.status).toBe(409);
    expect(proxima.body.erros).toEqual([{ caminho: '/required', mensagem: 'required property removed: valor' }]);
  });
});

describe('POST /versao-de-esquema/verificar-compatibilidade', () => {
  const verificar = (corpo: Record<string, unknown>, token = ctx.todas) =>
    ctx.api().post('/versao-de-esquema/verificar-compatibilidade').set(auth(token)).send(corpo);

  test('When asked, then it answers compativel and erros against the latest version and stores nothing', async () => {
    const tipo = await criarTipo(ctx, { compatibilidade: 'full' });
    await criarVersao(ctx, tipo.id);
    const quebra = await verificar({ tipo_de_evento_id: tipo.id, esquema: COM_CAMPO });
    expect(quebra.status).toBe(200);
    expect(quebra.body).toMatchObject({ compativel: false, compatibilidade: 'full', versao_anterior: 1, motivo: null });
    expect(quebra.body.erros).toContainEqual({ caminho: '/required', mensagem: 'required property added: cliente' });
    const mesma = await verificar({ tipo_de_evento_id: tipo.id, esquema: ESQUEMA_PEDIDO });
    expect(mesma.body).toMatchObject({ compativel: true, erros: [] });
    const curto = { type: 'string', minLength: 1, maxLength: 10 };
    const estreito = { ...ESQUEMA_PEDIDO, properties: { ...ESQUEMA_PEDIDO.properties, numero: curto } };
    const soPraFrente = await verificar({ tipo_de_evento_id: tipo.id, esquema: estreito, compatibilidade: 'forward' });
    expect(soPraFrente.body).toMatchObject({ compativel: true, compatibilidade: 'forward' });
    const nosDois = await verificar({ tipo_de_evento_id: tipo.id, esquema: estreito });
    expect(nosDois.body.erros).toEqual([{ caminho: '/properties/numero/maxLength', mensagem: 'maxLength added' }]);
    expect(await versoesDe(tipo.id)).toHaveLength(1);
  });

  test('When the type has no version yet, then it is compatible and motivo says why', async () => {
    const tipo = await criarTipo(ctx, { compatibilidade: 'backward' });
    const response = await verificar({ tipo_de_evento_id: tipo.id, esquema: ESQUEMA_PEDIDO });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      compativel: true,
      erros: [],
      compatibilidade: 'backward',
      versao_anterior: null,
      motivo: expect.stringContaining('no version yet'),
    });
  });

  test('When the type does not exist, then 404; a bad rule or schema, 422; without monitoramento.criar, 403', async () => {
    expect((await verificar({ tipo_de_evento_id: MISSING, esquema: ESQUEMA_PEDIDO })).status).toBe(404);
    const tipo = await criarTipo(ctx);
    const regra = await verificar({ tipo_de_evento_id: tipo.id, esquema: ESQUEMA_PEDIDO, compatibilidade: 'sideways' });
    expect(regra.status).toBe(422);
    const esquema = await verificar({ tipo_de_evento_id: tipo.id, esquema: { type: 'objeto' } });
    expect(esquema.status).toBe(422);
    expect(esquema.body.codigo).toBe('esquema_invalido');
    expect((await verificar({ tipo_de_evento_id: tipo.id, esquema: ESQUEMA_PEDIDO }, ctx.leitor)).status).toBe(403);
    expect((await ctx.api().post('/versao-de-esquema/verificar-compatibilidade').send({})).status).toBe(401);
  });
});
