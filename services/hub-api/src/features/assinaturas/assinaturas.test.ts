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
} from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

const MISSING = '01900000-0000-7000-8000-00000000ffff';

/** A subscriber, a type with versions 1 and 2, and the body of a subscription to version 1. */
async function cenario(url = 'https://recebedor.example/webhook') {
  const assinante = await criarAplicativo(ctx, 'Assinante');
  const tipo = await criarTipo(ctx);
  await criarVersao(ctx, tipo.id);
  await criarVersao(ctx, tipo.id);
  return {
    assinante,
    tipo,
    corpo: {
      aplicativo_assinante_id: assinante.id,
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      url_de_destino: url,
    },
  };
}

async function assinar(corpo: Record<string, unknown>) {
  const response = await ctx.api().post('/assinatura').set(auth(ctx.todas)).send(corpo);
  expect(response.status).toBe(201);
  return response.body as Record<string, unknown> & { id: string };
}

describe('who may call /assinatura', () => {
  test('When no token is sent, then all seven routes answer 401; without monitoramento, 403; a reader cannot write', async () => {
    const { id } = await assinar((await cenario()).corpo);
    const routes = [
      ['get', '/assinatura'],
      ['post', '/assinatura'],
      ['get', '/assinatura/filtro'],
      ['get', '/assinatura/autocomplete'],
      ['get', `/assinatura/${id}`],
      ['patch', `/assinatura/${id}`],
      ['delete', `/assinatura/${id}`],
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
    for (const [method, path] of routes.filter(([m]) => m !== 'get')) {
      expect({ method, path, status: (await ctx.api()[method](path).set(auth(ctx.leitor)).send({})).status }).toEqual({
        method,
        path,
        status: 403,
      });
    }
  });
});

describe('/assinatura', () => {
  test('When a subscription is created, then it has every field, 8 attempts by default, and reads back', async () => {
    const { assinante, tipo, corpo } = await cenario();
    const criada = await assinar(corpo);
    expect(criada).toEqual({
      id: expect.any(String),
      aplicativo_assinante_id: assinante.id,
      aplicativo_assinante_nome: 'Assinante',
      tipo_de_evento_id: tipo.id,
      tipo_de_evento_nome: tipo.nome,
      versao_do_esquema: 1,
      url_de_destino: 'https://recebedor.example/webhook',
      maximo_de_tentativas: 8,
      entrega_ordenada: false,
      formato: 'standard-webhooks',
      ativa: true,
      filtro: null,
      criado_em: expect.stringMatching(ISO_MS),
      atualizado_em: expect.stringMatching(ISO_MS),
      alterada_por_tipo: 'operador',
      alterada_por: expect.stringMatching(/^monitor\./),
      alterada_em: criada.criado_em,
    });
    expect((await ctx.api().get(`/assinatura/${criada.id}`).set(auth(ctx.leitor))).body).toEqual(criada);
  });

  test('When a reference does not exist, then 422 naming it', async () => {
    const { corpo } = await cenario();
    for (const [campo, valor, codigo] of [
      ['aplicativo_assinante_id', MISSING, 'aplicativo_inexistente'],
      ['tipo_de_evento_id', MISSING, 'tipo_de_evento_inexistente'],
      ['versao_do_esquema', 3, 'versao_inexistente'],
    ] as const) {
      const response = await ctx
        .api()
        .post('/assinatura')
        .set(auth(ctx.todas))
        .send({ ...corpo, [campo]: valor });
      expect({
        campo,
        status: response.status,
        codigo: response.body.codigo,
        caminho: response.body.erros[0].caminho,
      }).toEqual({ campo, status: 422, codigo, caminho: `/${campo}` });
    }
  });

  test.each([
    [{ url_de_destino: 'ftp://recebedor.example/x' }],
    [{ url_de_destino: 'https://usuario:senha@recebedor.example/x' }],
    [{ url_de_destino: `https://recebedor.example/${'a'.repeat(2040)}` }],
    [{ url_de_destino: 'recebedor.example/x' }],
    [{ maximo_de_tentativas: 0 }],
    [{ maximo_de_tentativas: 51 }],
    [{ versao_do_esquema: 0 }],
  ])('When the body has %j, then 422', async (change) => {
    const { corpo } = await cenario();
    const response = await ctx
      .api()
      .post('/assinatura')
      .set(auth(ctx.todas))
      .send({ ...corpo, ...change });
    expect(response.status).toBe(422);
    expect(response.body.erros[0].caminho).toBe(`/${Object.keys(change)[0]}`);
  });

  test('When the same application subscribes twice to the same version and URL, then 409', async () => {
    const { corpo } = await cenario();
    await assinar(corpo);
    const response = await ctx.api().post('/assinatura').set(auth(ctx.todas)).send(corpo);
    expect(response.status).toBe(409);
    expect(response.body.codigo).toBe('assinatura_duplicada');
    await assinar({ ...corpo, versao_do_esquema: 2 });
  });

  test('When a subscription is updated, then URL, attempts and ativa change and nothing else can', async () => {
    const criada = await assinar((await cenario()).corpo);
    const response = await ctx
      .api()
      .patch(`/assinatura/${criada.id}`)
      .set(auth(ctx.todas))
      .send({ url_de_destino: 'https://novo.example/h', maximo_de_tentativas: 50, ativa: false });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      url_de_destino: 'https://novo.example/h',
      maximo_de_tentativas: 50,
      ativa: false,
      versao_do_esquema: 1,
    });
    const back = await ctx.api().patch(`/assinatura/${criada.id}`).set(auth(ctx.todas)).send({ ativa: true });
    expect(back.body.ativa).toBe(true);
    expect(
      (await ctx.api().patch(`/assinatura/${criada.id}`).set(auth(ctx.todas)).send({ versao_do_esquema: 2 })).status,
    ).toBe(422);
    expect(
      (await ctx.api().patch(`/assinatura/${criada.id}`).set(auth(ctx.todas)).send({ url_de_destino: 'gopher://x' }))
        .status,
    ).toBe(422);
  });

  test('When a subscription is deleted, then 204, afterwards 404, and it is gone from the lists', async () => {
    const { assinante, corpo } = await cenario();
    const criada = await assinar(corpo);
    expect((await ctx.api().delete(`/assinatura/${criada.id}`).set(auth(ctx.todas))).status).toBe(204);
    expect((await ctx.api().get(`/assinatura/${criada.id}`).set(auth(ctx.leitor))).status).toBe(404);
    expect((await ctx.api().patch(`/assinatura/${criada.id}`).set(auth(ctx.todas)).send({ ativa: true })).status).toBe(
      404,
    );
    expect((await ctx.api().delete(`/assinatura/${criada.id}`).set(auth(ctx.todas))).status).toBe(404);
    const lista = await ctx
      .api()
      .get('/assinatura/filtro')
      .query({ aplicativo_assinante_id: assinante.id })
      .set(auth(ctx.leitor));
    expect(lista.body).toEqual([]);
    // The same subscription can be made again after the deletion.
    await assinar(corpo);
  });

  test('When lists are asked for, then page and autocomplete use the frame and filters combine', async () => {
    const { assinante, tipo, corpo } = await cenario();
    await assinar(corpo);
    await assinar({ ...corpo, url_de_destino: 'https://outro.example/a' });
    await assinar({ ...corpo, versao_do_esquema: 2 });
    const pagina = await ctx
      .api()
      .get('/assinatura')
      .query({ aplicativo_assinante_id: assinante.id, tamanho: 2 })
      .set(auth(ctx.leitor));
    expectPagina(pagina.body, 1, 2);
    expect(pagina.body.total).toBe(3);
    const filtro = await ctx
      .api()
      .get('/assinatura/filtro')
      .query({ tipo_de_evento_id: tipo.id, versao_do_esquema: '1', ativa: 'true' })
      .set(auth(ctx.leitor));
    expect(filtro.body.map((a: { url_de_destino: string }) => a.url_de_destino).sort()).toEqual([
      'https://outro.example/a',
      'https://recebedor.example/webhook',
    ]);
    const auto = await ctx
      .api()
      .get('/assinatura/autocomplete')
      .query({ busca: 'outro.example', tipo_de_evento_id: tipo.id })
      .set(auth(ctx.leitor));
    expectPagina(auto.body, 1, 10);
    expect(auto.body.itens).toEqual([
      {
        id: expect.any(String),
        aplicativo_assinante_nome: 'Assinante',
        tipo_de_evento_nome: tipo.nome,
        versao_do_esquema: 1,
        url_de_destino: 'https://outro.example/a',
      },
    ]);
  });

  test('When a type has a subscription, then deleting the type is 409', async () => {
    const { tipo, corpo } = await cenario();
    await assinar(corpo);
    const response = await ctx.api().delete(`/tipo-de-evento/${tipo.id}`).set(auth(ctx.todas));
    expect(response.status).toBe(409);
  });
});
