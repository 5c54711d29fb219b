import {
  auth,
  type Contexto,
  criarTipo,
  criarVersao,
  ESQUEMA_PEDIDO,
  encerrarContexto,
  expectPagina,
  ISO_MS,
  iniciarContexto,
} from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

const MISSING = '01900000-0000-7000-8000-00000000ffff';

describe('who may call /versao-de-esquema', () => {
  test('When no token is sent, then all seven routes answer 401; without monitoramento, 403', async () => {
    const tipo = await criarTipo(ctx);
    const { id } = await criarVersao(ctx, tipo.id);
    const routes = [
      ['get', '/versao-de-esquema'],
      ['post', '/versao-de-esquema'],
      ['get', '/versao-de-esquema/autocomplete'],
      ['get', '/versao-de-esquema/filtro'],
      ['get', `/versao-de-esquema/${id}`],
      ['patch', `/versao-de-esquema/${id}`],
      ['post', `/versao-de-esquema/${id}/validar`],
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
    expect(
      (await ctx.api().patch(`/versao-de-esquema/${id}`).set(auth(ctx.leitor)).send({ ativa: false })).status,
    ).toBe(403);
  });
});

describe('/versao-de-esquema', () => {
  test('When versions are created for a type, then they are numbered 1, 2, 3 and keep the schema exactly', async () => {
    const tipo = await criarTipo(ctx);
    const first = await ctx
      .api()
      .post('/versao-de-esquema')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: tipo.id, esquema: ESQUEMA_PEDIDO, descricao: 'primeira' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.any(String),
      tipo_de_evento_id: tipo.id,
      tipo_de_evento_nome: tipo.nome,
      versao: 1,
      esquema: ESQUEMA_PEDIDO,
      ativa: true,
      descricao: 'primeira',
      criado_em: expect.stringMatching(ISO_MS),
      atualizado_em: expect.stringMatching(ISO_MS),
    });
    expect(Object.keys(first.body.esquema)).toEqual(Object.keys(ESQUEMA_PEDIDO));
    const second = await criarVersao(ctx, tipo.id);
    const third = await criarVersao(ctx, tipo.id, {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
    });
    expect([second.versao, third.versao]).toEqual([2, 3]);
  });

  test('When ten versions of one type are created at once, then they get the numbers 1 to 10 exactly once', async () => {
    const tipo = await criarTipo(ctx);
    const criadas = await Promise.all(Array.from({ length: 10 }, () => criarVersao(ctx, tipo.id)));
    expect(criadas.map((v) => v.versao).sort((a, b) => Number(a) - Number(b))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  test('When the schema is invalid, then 422 esquema_invalido with the errors of ajv', async () => {
    const tipo = await criarTipo(ctx);
    const invalido = await ctx
      .api()
      .post('/versao-de-esquema')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: tipo.id, esquema: { type: 'objeto' } });
    expect(invalido.status).toBe(422);
    expect(invalido.body.codigo).toBe('esquema_invalido');
    expect(invalido.body.erros[0]).toMatchObject({ caminho: '/esquema/type', mensagem: expect.any(String) });
    const strict = await ctx
      .api()
      .post('/versao-de-esquema')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: tipo.id, esquema: { type: 'object', propriedades: {} } });
    expect(strict.status).toBe(422);
    expect(strict.body.erros[0].mensagem).toMatch(/unknown keyword: "propriedades"/);
    const draft04 = await ctx
      .api()
      .post('/versao-de-esquema')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: tipo.id, esquema: { $schema: 'http://json-schema.org/draft-04/schema#' } });
    expect(draft04.body.erros[0].caminho).toBe('/esquema/$schema');
    const notObject = await ctx
      .api()
      .post('/versao-de-esquema')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: tipo.id, esquema: [1] });
    expect(notObject.status).toBe(422);
    const lista = await ctx.api().get('/versao-de-esquema').query({ tipo_de_evento_id: tipo.id }).set(auth(ctx.leitor));
    expect(lista.body.total).toBe(0);
  });

  test('When the type does not exist, then 422 tipo_de_evento_inexistente', async () => {
    const response = await ctx
      .api()
      .post('/versao-de-esquema')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: MISSING, esquema: ESQUEMA_PEDIDO });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({
      codigo: 'tipo_de_evento_inexistente',
      erros: [{ caminho: '/tipo_de_evento_id' }],
    });
  });

  test('When PATCH sends a schema, then 422 and the schema stays as it was', async () => {
    const tipo = await criarTipo(ctx);
    const versao = await criarVersao(ctx, tipo.id);
    const response = await ctx
      .api()
      .patch(`/versao-de-esquema/${versao.id}`)
      .set(auth(ctx.todas))
      .send({ esquema: { type: 'string' } });
    expect(response.status).toBe(422);
    expect(response.body.erros[0].mensagem).toMatch(/unknown field\(s\): esquema/);
    expect((await ctx.api().get(`/versao-de-esquema/${versao.id}`).set(auth(ctx.leitor))).body.esquema).toEqual(
      ESQUEMA_PEDIDO,
    );
  });

  test('When the database is asked to change a schema directly, then it refuses too', async () => {
    const tipo = await criarTipo(ctx);
    const versao = await criarVersao(ctx, tipo.id);
    await expect(
      ctx.hub.db.versaoDeEsquema.update({ where: { id: versao.id }, data: { esquema: { type: 'string' } } }),
    ).rejects.toThrow(/never changes/);
  });

  test('When a version is switched off and on, then ativa follows and filters see it', async () => {
    const tipo = await criarTipo(ctx);
    const versao = await criarVersao(ctx, tipo.id);
    const off = await ctx
      .api()
      .patch(`/versao-de-esquema/${versao.id}`)
      .set(auth(ctx.todas))
      .send({ ativa: false, descricao: 'obsoleta' });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ ativa: false, descricao: 'obsoleta', versao: 1, esquema: ESQUEMA_PEDIDO });
    const inativas = await ctx
      .api()
      .get('/versao-de-esquema/filtro')
      .query({ tipo_de_evento_id: tipo.id, ativa: 'false' })
      .set(auth(ctx.leitor));
    expect(inativas.body.map((v: { id: string }) => v.id)).toEqual([versao.id]);
    const on = await ctx.api().patch(`/versao-de-esquema/${versao.id}`).set(auth(ctx.todas)).send({ ativa: true });
    expect(on.body.ativa).toBe(true);
    const ativas = await ctx
      .api()
      .get('/versao-de-esquema/filtro')
      .query({ tipo_de_evento_nome: tipo.nome, versao: '1', ativa: 'true' })
      .set(auth(ctx.leitor));
    expect(ativas.body.map((v: { id: string }) => v.id)).toEqual([versao.id]);
  });

  test('When lists are asked for, then page and autocomplete use the frame and the filter is a plain list', async () => {
    const tipo = await criarTipo(ctx);
    for (let i = 0; i < 3; i++) await criarVersao(ctx, tipo.id);
    const pagina = await ctx
      .api()
      .get('/versao-de-esquema')
      .query({ tipo_de_evento_id: tipo.id, tamanho: 2, pagina: 2 })
      .set(auth(ctx.leitor));
    expectPagina(pagina.body, 2, 2);
    expect(pagina.body.total).toBe(3);
    expect(pagina.body.itens.map((v) => v.versao)).toEqual([3]);
    const auto = await ctx
      .api()
      .get('/versao-de-esquema/autocomplete')
      .query({ busca: tipo.nome })
      .set(auth(ctx.leitor));
    expectPagina(auto.body, 1, 10);
    expect(auto.body.itens).toEqual(
      [1, 2, 3].map((versao) => ({
        id: expect.any(String),
        tipo_de_evento_id: tipo.id,
        tipo_de_evento_nome: tipo.nome,
        versao,
      })),
    );
    const filtro = await ctx
      .api()
      .get('/versao-de-esquema/filtro')
      .query({ tipo_de_evento_id: tipo.id })
      .set(auth(ctx.leitor));
    expect(filtro.body.map((v: { versao: number }) => v.versao)).toEqual([1, 2, 3]);
  });

  test('When the id does not exist, then GET, PATCH and validar are 404', async () => {
    expect((await ctx.api().get(`/versao-de-esquema/${MISSING}`).set(auth(ctx.leitor))).status).toBe(404);
    expect(
      (await ctx.api().patch(`/versao-de-esquema/${MISSING}`).set(auth(ctx.todas)).send({ ativa: true })).status,
    ).toBe(404);
    expect(
      (await ctx.api().post(`/versao-de-esquema/${MISSING}/validar`).set(auth(ctx.todas)).send({ dados: {} })).status,
    ).toBe(404);
  });
});
