import {
  auth,
  type Contexto,
  criarAplicativo,
  criarTipo,
  criarVersao,
  encerrarContexto,
  expectPagina,
  ISO_MS,
  iniciarContexto,
  unico,
} from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

const MISSING = '01900000-0000-7000-8000-00000000ffff';

describe('who may call /tipo-de-evento', () => {
  test('When no token is sent, then all seven routes answer 401; without monitoramento, 403', async () => {
    const { id } = await criarTipo(ctx);
    const routes = [
      ['get', '/tipo-de-evento'],
      ['post', '/tipo-de-evento'],
      ['get', '/tipo-de-evento/autocomplete'],
      ['get', '/tipo-de-evento/filtro'],
      ['get', `/tipo-de-evento/${id}`],
      ['patch', `/tipo-de-evento/${id}`],
      ['delete', `/tipo-de-evento/${id}`],
    ] as const;
    for (const [method, path] of routes) {
      expect({ method, path, status: (await ctx.api()[method](path).send({})).status }).toEqual({
        method,
        path,
        status: 401,
      });
      const refused = await ctx.api()[method](path).set(auth(ctx.semMonitoramento)).send({});
      expect({ method, path, status: refused.status }).toEqual({ method, path, status: 403 });
    }
  });

  test('When the caller may only read, then DELETE is 403 and the type stays', async () => {
    const { id } = await criarTipo(ctx);
    expect((await ctx.api().delete(`/tipo-de-evento/${id}`).set(auth(ctx.leitor))).status).toBe(403);
    expect((await ctx.api().get(`/tipo-de-evento/${id}`).set(auth(ctx.leitor))).status).toBe(200);
  });
});

describe('/tipo-de-evento', () => {
  test('When the hub starts, then colaborador.atualizado exists, owned by identidade, with version 1', async () => {
    const response = await ctx
      .api()
      .get('/tipo-de-evento/filtro')
      .query({ nome: 'colaborador.atualizado' })
      .set(auth(ctx.leitor));
    expect(response.body).toEqual([
      expect.objectContaining({
        nome: 'colaborador.atualizado',
        aplicativo_nome: 'Identidade',
        ativo: true,
        retencao_em_dias: 30,
      }),
    ]);
    const versoes = await ctx
      .api()
      .get('/versao-de-esquema')
      .query({ tipo_de_evento_id: response.body[0].id })
      .set(auth(ctx.leitor));
    expect(versoes.body.itens.map((v: { versao: number }) => v.versao)).toEqual([1]);
  });

  test('When a type is created, then it has every field, retention 30 by default, and reads back', async () => {
    const dono = await criarAplicativo(ctx, 'Loja');
    const nome = `${unico('loja')}.pedido.criado`;
    const response = await ctx
      .api()
      .post('/tipo-de-evento')
      .set(auth(ctx.todas))
      .send({ nome, descricao: ' Um pedido ', aplicativo_id: dono.id });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(String),
      nome,
      descricao: 'Um pedido',
      aplicativo_id: dono.id,
      aplicativo_nome: 'Loja',
      ativo: true,
      retencao_em_dias: 30,
      compatibilidade: 'none',
      criado_em: expect.stringMatching(ISO_MS),
      atualizado_em: expect.stringMatching(ISO_MS),
    });
    expect((await ctx.api().get(`/tipo-de-evento/${response.body.id}`).set(auth(ctx.leitor))).body).toEqual(
      response.body,
    );
  });

  test('When the name is taken, then 409', async () => {
    const tipo = await criarTipo(ctx);
    const response = await ctx
      .api()
      .post('/tipo-de-evento')
      .set(auth(ctx.todas))
      .send({ nome: tipo.nome, aplicativo_id: tipo.aplicativo_id });
    expect(response.status).toBe(409);
    expect(response.body.codigo).toBe('nome_em_uso');
  });

  test('When the owner application does not exist, then 422 aplicativo_inexistente', async () => {
    const response = await ctx
      .api()
      .post('/tipo-de-evento')
      .set(auth(ctx.todas))
      .send({ nome: `${unico('x')}.y`, aplicativo_id: MISSING });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ codigo: 'aplicativo_inexistente', erros: [{ caminho: '/aplicativo_id' }] });
  });

  test.each([
    ['Pedido.Criado', undefined],
    ['pedido..criado', undefined],
    ['pedido-criado', undefined],
    ['.pedido', undefined],
    ['pedido.criado', 0],
    ['pedido.criado', 3651],
    ['pedido.criado', 1.5],
  ])('When the name is %s with retention %s, then 422', async (nome, retencao) => {
    const dono = await criarAplicativo(ctx);
    const response = await ctx
      .api()
      .post('/tipo-de-evento')
      .set(auth(ctx.todas))
      .send({ nome, aplicativo_id: dono.id, retencao_em_dias: retencao });
    expect(response.status).toBe(422);
  });

  test('When lists are asked for, then page, autocomplete and filter agree on what exists', async () => {
    const dono = await criarAplicativo(ctx);
    const marca = unico('lista');
    for (const sufixo of ['b', 'a', 'c'])
      await criarTipo(ctx, { nome: `${marca}.${sufixo}`, aplicativo_id: dono.id, retencao_em_dias: 7 });
    const pagina = await ctx.api().get('/tipo-de-evento').query({ busca: marca, tamanho: 2 }).set(auth(ctx.leitor));
    expectPagina(pagina.body, 1, 2);
    expect(pagina.body.total).toBe(3);
    expect(pagina.body.itens.map((t) => t.nome)).toEqual([`${marca}.a`, `${marca}.b`]);
    const auto = await ctx
      .api()
      .get('/tipo-de-evento/autocomplete')
      .query({ busca: marca, aplicativo_id: dono.id, pagina: 2, tamanho: 2 })
      .set(auth(ctx.leitor));
    expectPagina(auto.body, 2, 2);
    expect(auto.body.itens).toEqual([{ id: expect.any(String), nome: `${marca}.c` }]);
    const filtro = await ctx
      .api()
      .get('/tipo-de-evento/filtro')
      .query({ aplicativo_id: dono.id, ativo: 'true' })
      .set(auth(ctx.leitor));
    expect(filtro.body.map((t: { nome: string }) => t.nome)).toEqual([`${marca}.a`, `${marca}.b`, `${marca}.c`]);
    expect(
      (await ctx.api().get('/tipo-de-evento/filtro').query({ aplicativo_id: 'x' }).set(auth(ctx.leitor))).status,
    ).toBe(400);
  });

  test('When busca holds _ or %, then they are plain characters, not wildcards', async () => {
    const dono = await criarAplicativo(ctx);
    const marca = unico('curinga');
    await criarTipo(ctx, { nome: `${marca}.item_criado`, aplicativo_id: dono.id });
    await criarTipo(ctx, { nome: `${marca}.itemxcriado`, aplicativo_id: dono.id });
    const response = await ctx
      .api()
      .get('/tipo-de-evento')
      .query({ busca: `${marca}.item_` })
      .set(auth(ctx.leitor));
    expect(response.body.itens.map((t: { nome: string }) => t.nome)).toEqual([`${marca}.item_criado`]);
    const percent = await ctx
      .api()
      .get('/tipo-de-evento/autocomplete')
      .query({ busca: `${marca}%` })
      .set(auth(ctx.leitor));
    expect(percent.body.total).toBe(0);
  });

  test('When a type is updated, then descricao, ativo and retention change and the name cannot', async () => {
    const tipo = await criarTipo(ctx, { descricao: 'antes' });
    const response = await ctx
      .api()
      .patch(`/tipo-de-evento/${tipo.id}`)
      .set(auth(ctx.todas))
      .send({ ativo: false, retencao_em_dias: 365 });
    expect(response.body).toMatchObject({ descricao: 'antes', ativo: false, retencao_em_dias: 365 });
    const cleared = await ctx.api().patch(`/tipo-de-evento/${tipo.id}`).set(auth(ctx.todas)).send({ descricao: null });
    expect(cleared.body.descricao).toBeNull();
    const rename = await ctx
      .api()
      .patch(`/tipo-de-evento/${tipo.id}`)
      .set(auth(ctx.todas))
      .send({ nome: 'outro.nome' });
    expect(rename.status).toBe(422);
  });

  test('When an unused type is deleted, then 204 and afterwards 404', async () => {
    const tipo = await criarTipo(ctx);
    expect((await ctx.api().delete(`/tipo-de-evento/${tipo.id}`).set(auth(ctx.todas))).status).toBe(204);
    expect((await ctx.api().get(`/tipo-de-evento/${tipo.id}`).set(auth(ctx.leitor))).status).toBe(404);
    expect((await ctx.api().delete(`/tipo-de-evento/${tipo.id}`).set(auth(ctx.todas))).status).toBe(404);
  });

  test('When a type has a schema version, then DELETE is 409 and the type stays', async () => {
    const tipo = await criarTipo(ctx);
    await criarVersao(ctx, tipo.id);
    const response = await ctx.api().delete(`/tipo-de-evento/${tipo.id}`).set(auth(ctx.todas));
    expect(response.status).toBe(409);
    expect(response.body.codigo).toBe('tipo_de_evento_em_uso');
    expect((await ctx.api().get(`/tipo-de-evento/${tipo.id}`).set(auth(ctx.leitor))).status).toBe(200);
  });

  test('When the id does not exist, then GET, PATCH and DELETE are 404', async () => {
    expect((await ctx.api().get(`/tipo-de-evento/${MISSING}`).set(auth(ctx.leitor))).status).toBe(404);
    expect(
      (await ctx.api().patch(`/tipo-de-evento/${MISSING}`).set(auth(ctx.todas)).send({ ativo: true })).status,
    ).toBe(404);
    expect((await ctx.api().delete(`/tipo-de-evento/${MISSING}`).set(auth(ctx.todas))).status).toBe(404);
  });
});
