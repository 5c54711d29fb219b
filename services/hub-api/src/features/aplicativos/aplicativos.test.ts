import {
  type Contexto,
  encerrarContexto,
  expectPagina,
  auth,
  ISO_MS,
  iniciarContexto,
  unico,
} from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

async function criar(nome = 'Loja', clientId = unico('loja')) {
  const response = await ctx.api().post('/aplicativo').set(auth(ctx.todas)).send({ nome, client_id: clientId });
  expect(response.status).toBe(201);
  return response.body as { id: string; nome: string; client_id: string; ativo: boolean };
}

describe('who may call /aplicativo', () => {
  test('When no token is sent, then every route answers 401 with problem+json', async () => {
    const { id } = await criar();
    for (const [method, path] of [
      ['get', '/aplicativo'],
      ['post', '/aplicativo'],
      ['get', `/aplicativo/${id}`],
      ['patch', `/aplicativo/${id}`],
    ] as const) {
      const response = await ctx.api()[method](path).send({});
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
      expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });

  test('When the caller has no monitoramento permission, then 403', async () => {
    const response = await ctx.api().get('/aplicativo').set(auth(ctx.semMonitoramento));
    expect(response.status).toBe(403);
    expect(response.body.codigo).toBe('sem_permissao');
  });

  test('When the caller may only read, then GET answers and POST and PATCH are 403', async () => {
    const { id } = await criar();
    expect((await ctx.api().get(`/aplicativo/${id}`).set(auth(ctx.leitor))).status).toBe(200);
    expect(
      (
        await ctx
          .api()
          .post('/aplicativo')
          .set(auth(ctx.leitor))
          .send({ nome: 'x', client_id: unico('x') })
      ).status,
    ).toBe(403);
    expect((await ctx.api().patch(`/aplicativo/${id}`).set(auth(ctx.leitor)).send({ ativo: false })).status).toBe(403);
  });

  test('When an application token is sent to a panel route, then 401', async () => {
    const token = await ctx.identity.appToken('identidade');
    expect((await ctx.api().get('/aplicativo').set(auth(token))).status).toBe(401);
  });
});

describe('/aplicativo', () => {
  test('When the hub starts for the first time, then the platform application identidade exists', async () => {
    const response = await ctx.api().get('/aplicativo').query({ busca: 'identidade' }).set(auth(ctx.leitor));
    expectPagina(response.body, 1, 10);
    expect(response.body.itens).toEqual([
      expect.objectContaining({ nome: 'Identidade', client_id: 'identidade', ativo: true }),
    ]);
  });

  test('When an application is created, then it answers 201 with every field and can be read back', async () => {
    const clientId = unico('erp');
    const criado = await criar('  ERP Financeiro ', clientId);
    expect(criado).toEqual({
      id: expect.any(String),
      nome: 'ERP Financeiro',
      client_id: clientId,
      ativo: true,
      criado_em: expect.stringMatching(ISO_MS),
      atualizado_em: expect.stringMatching(ISO_MS),
    });
    const lido = await ctx.api().get(`/aplicativo/${criado.id}`).set(auth(ctx.leitor));
    expect(lido.status).toBe(200);
    expect(lido.body).toEqual(criado);
  });

  test('When the client_id is taken, then 409', async () => {
    const { client_id } = await criar();
    const response = await ctx.api().post('/aplicativo').set(auth(ctx.todas)).send({ nome: 'Outro', client_id });
    expect(response.status).toBe(409);
    expect(response.body.codigo).toBe('client_id_em_uso');
  });

  test.each([
    [{ nome: '', client_id: 'x' }, '/nome'],
    [{ nome: 'x'.repeat(121), client_id: 'x' }, '/nome'],
    [{ nome: 'x', client_id: 'com espaço' }, '/client_id'],
    [{ nome: 'x' }, '/client_id'],
    [{ nome: 'x', client_id: 'y', ativo: false }, ''],
  ])('When the body is %j, then 422 pointing at %s', async (body, caminho) => {
    const response = await ctx.api().post('/aplicativo').set(auth(ctx.todas)).send(body);
    expect(response.status).toBe(422);
    expect(response.body.erros.map((e: { caminho: string }) => e.caminho)).toContain(caminho);
  });

  test('When the list is paged, then the frame holds the page and the total, ordered by name', async () => {
    const marca = unico('pag');
    for (const nome of ['C', 'A', 'B']) await criar(`${marca} ${nome}`, unico('pag'));
    const first = await ctx
      .api()
      .get('/aplicativo')
      .query({ busca: marca, pagina: 1, tamanho: 2 })
      .set(auth(ctx.leitor));
    expectPagina(first.body, 1, 2);
    expect(first.body.total).toBe(3);
    expect(first.body.itens.map((a) => a.nome)).toEqual([`${marca} A`, `${marca} B`]);
    const second = await ctx
      .api()
      .get('/aplicativo')
      .query({ busca: marca, pagina: '2', tamanho: '2' })
      .set(auth(ctx.leitor));
    expect(second.body.itens.map((a: { nome: string }) => a.nome)).toEqual([`${marca} C`]);
    const clamped = await ctx
      .api()
      .get('/aplicativo')
      .query({ busca: marca, pagina: 0, tamanho: 100000 })
      .set(auth(ctx.leitor));
    expectPagina(clamped.body, 1, 500);
    expect((await ctx.api().get('/aplicativo').query({ tamanho: 'dez' }).set(auth(ctx.leitor))).status).toBe(400);
  });

  test('When an application is renamed and switched off, then only those fields change', async () => {
    const criado = await criar();
    const response = await ctx
      .api()
      .patch(`/aplicativo/${criado.id}`)
      .set(auth(ctx.todas))
      .send({ nome: 'Renomeado', ativo: false });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: criado.id,
      nome: 'Renomeado',
      client_id: criado.client_id,
      ativo: false,
    });
    const inativos = await ctx
      .api()
      .get('/aplicativo')
      .query({ busca: criado.client_id, ativo: 'false' })
      .set(auth(ctx.leitor));
    expect(inativos.body.itens.map((a: { id: string }) => a.id)).toEqual([criado.id]);
    const nada = await ctx.api().patch(`/aplicativo/${criado.id}`).set(auth(ctx.todas)).send({});
    expect(nada.body).toEqual(response.body);
  });

  test('When PATCH tries to change the client_id, then 422', async () => {
    const criado = await criar();
    const response = await ctx
      .api()
      .patch(`/aplicativo/${criado.id}`)
      .set(auth(ctx.todas))
      .send({ client_id: 'outro' });
    expect(response.status).toBe(422);
  });

  test('When the id does not exist or is not a uuid, then 404', async () => {
    const missing = '01900000-0000-7000-8000-00000000ffff';
    expect((await ctx.api().get(`/aplicativo/${missing}`).set(auth(ctx.leitor))).status).toBe(404);
    expect((await ctx.api().patch(`/aplicativo/${missing}`).set(auth(ctx.todas)).send({ ativo: true })).status).toBe(
      404,
    );
    expect((await ctx.api().get('/aplicativo/nao-e-uuid').set(auth(ctx.leitor))).status).toBe(404);
  });
});

test('When names with accents and mixed case are listed, then they are in Portuguese alphabetical order', async () => {
  const marca = unico('ordem');
  for (const nome of ['Banana', 'abacate', 'Árvore', 'cereja']) await criar(`${marca} ${nome}`, unico('ordem'));
  const response = await ctx.api().get('/aplicativo').query({ busca: marca }).set(auth(ctx.leitor));
  expect(response.body.itens.map((a: { nome: string }) => a.nome.slice(marca.length + 1))).toEqual([
    'abacate',
    'Árvore',
    'Banana',
    'cereja',
  ]);
});
