import { auth, type Contexto, criarAplicativo, encerrarContexto, ISO_MS } from '../../contexto.test-support';
import { assinanteComTipo, iniciarContextoDoAssinante, linhasDoAssinante, URL_PUBLICA } from './proprias.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContextoDoAssinante();
}, 60_000);
afterAll(() => encerrarContexto(ctx));

const painel = () => auth(ctx.todas);

describe('POST /assinaturas: the caller subscribes itself', () => {
  test('When an application subscribes, then 201 with itself as subscriber and author; the panel sees who and when', async () => {
    const a = await assinanteComTipo(ctx);
    const criada = await ctx
      .api()
      .post('/assinaturas')
      .set(a.comToken)
      .send({ ...a.corpo, formato: 'cloudevents' });
    expect(criada.status).toBe(201);
    expect(criada.body).toMatchObject({
      aplicativo_assinante_id: a.aplicativo.id,
      tipo_de_evento_id: a.tipo.id,
      url_de_destino: URL_PUBLICA,
      formato: 'cloudevents',
      ativa: true,
      maximo_de_tentativas: 8,
      alterada_por_tipo: 'aplicativo',
      alterada_por: a.aplicativo.client_id,
    });
    expect(criada.body.alterada_em).toMatch(ISO_MS);
    const lista = await ctx.api().get('/assinaturas').set(a.comToken);
    expect(lista.body.itens.map((i: { id: string }) => i.id)).toEqual([criada.body.id]);
    const noPainel = await ctx.api().get(`/assinatura/${criada.body.id}`).set(painel());
    expect(noPainel.body).toMatchObject({ alterada_por_tipo: 'aplicativo', alterada_por: a.aplicativo.client_id });
  });

  test('When the body names aplicativo_assinante_id (even its own), then 422 at that field and nothing is created', async () => {
    const a = await assinanteComTipo(ctx);
    const outro = await criarAplicativo(ctx, 'Outro');
    for (const id of [outro.id, a.aplicativo.id]) {
      const response = await ctx
        .api()
        .post('/assinaturas')
        .set(a.comToken)
        .send({ ...a.corpo, aplicativo_assinante_id: id });
      expect(response.status).toBe(422);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(response.body.erros)).toContain('aplicativo_assinante_id');
    }
    expect(await linhasDoAssinante(ctx, a.aplicativo.id)).toEqual([]);
    expect(await linhasDoAssinante(ctx, outro.id)).toEqual([]);
  });

  test('When a rule of a panel-made subscription is broken, then the same 422 or 409, and nothing is created', async () => {
    const desligado = await assinanteComTipo(ctx);
    await ctx.api().patch(`/tipo-de-evento/${desligado.tipo.id}`).set(painel()).send({ ativo: false }).expect(200);
    const casos: [Record<string, unknown>, number, string][] = [
      [{ filtro: { 'dados.valor': { $gte: [] } } }, 422, 'filtro_invalido'],
      [{ versao_do_esquema: 7 }, 422, 'versao_inexistente'],
      [{ tipo_de_evento_id: '01900000-0000-7000-8000-00000000ffff' }, 422, 'tipo_de_evento_inexistente'],
      [{ tipo_de_evento_id: desligado.tipo.id }, 422, 'tipo_de_evento_inativo'],
      [{ url_de_destino: 'https://interno.exemplo/webhook' }, 422, 'destino_proibido'],
      [{ url_de_destino: 'https://127.0.0.1/webhook' }, 422, 'destino_proibido'],
      [{ url_de_destino: 'http://recebedor.exemplo/webhook' }, 422, 'https_obrigatorio'],
      [{ formato: 'soap' }, 422, 'dados_invalidos'],
    ];
    // One application per case: the refusals count in its budget of changes (8 a minute here).
    for (const [mudanca, status, codigo] of casos) {
      const x = await assinanteComTipo(ctx);
      const response = await ctx
        .api()
        .post('/assinaturas')
        .set(x.comToken)
        .send({ ...x.corpo, ...mudanca });
      expect({ mudanca, status: response.status, codigo: response.body.codigo }).toEqual({ mudanca, status, codigo });
      expect(await linhasDoAssinante(ctx, x.aplicativo.id)).toEqual([]);
    }
    const a = await assinanteComTipo(ctx);
    await ctx.api().post('/assinaturas').set(a.comToken).send(a.corpo).expect(201);
    const repetida = await ctx.api().post('/assinaturas').set(a.comToken).send(a.corpo);
    expect([repetida.status, repetida.body.codigo]).toEqual([409, 'assinatura_duplicada']);
    expect(await linhasDoAssinante(ctx, a.aplicativo.id)).toHaveLength(1);
  });

  test('When a body does not parse, holds a NUL or is not an object, then problem+json and nothing is created', async () => {
    const a = await assinanteComTipo(ctx);
    const malformado = await ctx
      .api()
      .post('/assinaturas')
      .set({ ...a.comToken, 'content-type': 'application/json' })
      .send('{"tipo_de_evento_id": ');
    expect(malformado.status).toBe(400);
    expect(malformado.headers['content-type']).toMatch(/^application\/problem\+json/);
    const casos: [unknown, number, string][] = [
      [{ ...a.corpo, url_de_destino: `${URL_PUBLICA}\u0000` }, 422, 'dados_invalidos'],
      [[a.corpo], 422, 'dados_invalidos'],
      ['texto', 400, 'json_invalido'],
    ];
    for (const [corpo, status, codigo] of casos) {
      const response = await ctx
        .api()
        .post('/assinaturas')
        .set({ ...a.comToken, 'content-type': 'application/json' })
        .send(JSON.stringify(corpo));
      expect([response.status, response.body.codigo, response.headers['content-type']]).toEqual([
        status,
        codigo,
        expect.stringMatching(/^application\/problem\+json/),
      ]);
    }
    expect(await linhasDoAssinante(ctx, a.aplicativo.id)).toEqual([]);
  });
});

describe('PATCH and DELETE /assinaturas/{id}: only one’s own', () => {
  test('When the application changes its subscription, then every field of the panel’s PATCH changes and it is the author; an operator’s change names the operator to the panel only', async () => {
    const a = await assinanteComTipo(ctx);
    const { body: criada } = await ctx.api().post('/assinaturas').set(a.comToken).send(a.corpo).expect(201);
    const mudanca = {
      url_de_destino: 'https://recebedor.exemplo/novo',
      filtro: { 'dados.valor': { $gte: 100 } },
      ativa: false,
      entrega_ordenada: true,
      formato: 'cloudevents',
    };
    const alterada = await ctx.api().patch(`/assinaturas/${criada.id}`).set(a.comToken).send(mudanca);
    expect(alterada.status).toBe(200);
    expect(alterada.body).toMatchObject({
      ...mudanca,
      alterada_por_tipo: 'aplicativo',
      alterada_por: a.aplicativo.client_id,
    });
    await ctx.api().patch(`/assinatura/${criada.id}`).set(painel()).send({ ativa: true }).expect(200);
    const noPainel = await ctx.api().get(`/assinatura/${criada.id}`).set(painel());
    expect(noPainel.body.alterada_por_tipo).toBe('operador');
    expect(noPainel.body.alterada_por).toMatch(/^monitor\./);
    const paraOAssinante = await ctx.api().get('/assinaturas').set(a.comToken);
    expect(paraOAssinante.body.itens[0]).toMatchObject({
      alterada_por_tipo: 'operador',
      alterada_por: null,
      ativa: true,
    });
  });

  test('When a PATCH body holds a NUL, another field, a bad formato or does not parse, then problem+json and the subscription is left as it was', async () => {
    const a = await assinanteComTipo(ctx);
    const { body: criada } = await ctx.api().post('/assinaturas').set(a.comToken).send(a.corpo).expect(201);
    const antes = await ctx.hub.db.assinatura.findUniqueOrThrow({ where: { id: criada.id } });
    const casos: [string, number, string][] = [
      [JSON.stringify({ url_de_destino: `${URL_PUBLICA}\u0000` }), 422, 'dados_invalidos'],
      [JSON.stringify({ aplicativo_assinante_id: a.aplicativo.id }), 422, 'dados_invalidos'],
      [JSON.stringify({ formato: 'xml' }), 422, 'dados_invalidos'],
      [JSON.stringify({ filtro: { 'dados.valor': { $gte: [] } } }), 422, 'filtro_invalido'],
      ['{"ativa": fal', 400, 'json_invalido'],
    ];
    for (const [corpo, status, codigo] of casos) {
      const response = await ctx
        .api()
        .patch(`/assinaturas/${criada.id}`)
        .set({ ...a.comToken, 'content-type': 'application/json' })
        .send(corpo);
      expect({ corpo, status: response.status, codigo: response.body.codigo }).toEqual({ corpo, status, codigo });
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(await ctx.hub.db.assinatura.findUniqueOrThrow({ where: { id: criada.id } })).toEqual(antes);
  });

  test('When another application’s subscription is changed or deleted, then 404 and it is left as it was', async () => {
    const dono = await assinanteComTipo(ctx);
    const intruso = await assinanteComTipo(ctx);
    const { body: alheia } = await ctx.api().post('/assinaturas').set(dono.comToken).send(dono.corpo).expect(201);
    const antes = await ctx.hub.db.assinatura.findUniqueOrThrow({ where: { id: alheia.id } });
    const patch = await ctx.api().patch(`/assinaturas/${alheia.id}`).set(intruso.comToken).send({ ativa: false });
    const del = await ctx.api().delete(`/assinaturas/${alheia.id}`).set(intruso.comToken);
    const ausente = await ctx.api().delete('/assinaturas/01900000-0000-7000-8000-00000000ffff').set(intruso.comToken);
    for (const response of [patch, del, ausente])
      expect([response.status, response.body.codigo]).toEqual([404, 'nao_encontrado']);
    expect(await ctx.hub.db.assinatura.findUniqueOrThrow({ where: { id: alheia.id } })).toEqual(antes);
  });

  test('When the application deletes its subscription, then 204, the row is kept as deleted by it, and a second DELETE is 404', async () => {
    const a = await assinanteComTipo(ctx);
    const { body: criada } = await ctx.api().post('/assinaturas').set(a.comToken).send(a.corpo).expect(201);
    await ctx.api().delete(`/assinaturas/${criada.id}`).set(a.comToken).expect(204);
    const [linha] = await linhasDoAssinante(ctx, a.aplicativo.id);
    expect(linha).toMatchObject({ ativa: false, alteradaPorTipo: 'aplicativo', alteradaPor: a.aplicativo.client_id });
    expect(linha?.excluidaEm).toBeInstanceOf(Date);
    expect((await ctx.api().get('/assinaturas').set(a.comToken)).body.total).toBe(0);
    expect((await ctx.api().delete(`/assinaturas/${criada.id}`).set(a.comToken)).status).toBe(404);
    expect((await ctx.api().patch(`/assinaturas/${criada.id}`).set(a.comToken).send({ ativa: true })).status).toBe(404);
  });

  test('When a panel user’s token is sent to the application’s writes, then 401 tipo_de_token_invalido and nothing changes', async () => {
    const a = await assinanteComTipo(ctx);
    const { body: criada } = await ctx.api().post('/assinaturas').set(a.comToken).send(a.corpo).expect(201);
    for (const [metodo, path] of [
      ['post', '/assinaturas'],
      ['patch', `/assinaturas/${criada.id}`],
      ['delete', `/assinaturas/${criada.id}`],
    ] as const) {
      const response = await ctx
        .api()
        [metodo](path)
        .set(painel())
        .send({ ...a.corpo, aplicativo_assinante_id: a.aplicativo.id });
      expect({ path, status: response.status, codigo: response.body.codigo }).toEqual({
        path,
        status: 401,
        codigo: 'tipo_de_token_invalido',
      });
    }
    expect(await linhasDoAssinante(ctx, a.aplicativo.id)).toHaveLength(1);
  });
});

describe('budgets per application', () => {
  test('When the application holds HUB_ASSINATURAS_POR_APLICATIVO subscriptions, then one more is 429 limite_de_assinaturas; a deletion frees a place', async () => {
    const a = await assinanteComTipo(ctx);
    const url = (n: number) => `https://recebedor.exemplo/${n}`;
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const response = await ctx
        .api()
        .post('/assinaturas')
        .set(a.comToken)
        .send({ ...a.corpo, url_de_destino: url(n) });
      expect(response.status).toBe(201);
      ids.push(response.body.id);
    }
    const alem = await ctx
      .api()
      .post('/assinaturas')
      .set(a.comToken)
      .send({ ...a.corpo, url_de_destino: url(4) });
    expect([alem.status, alem.body.codigo]).toEqual([429, 'limite_de_assinaturas']);
    expect(alem.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(alem.body.detail).toContain('HUB_ASSINATURAS_POR_APLICATIVO');
    expect(await linhasDoAssinante(ctx, a.aplicativo.id)).toHaveLength(3);
    await ctx.api().delete(`/assinaturas/${ids[0]}`).set(a.comToken).expect(204);
    await ctx
      .api()
      .post('/assinaturas')
      .set(a.comToken)
      .send({ ...a.corpo, url_de_destino: url(4) })
      .expect(201);
  });

  test('When two creations race for the last place, then one is 201 and the other 429', async () => {
    const a = await assinanteComTipo(ctx);
    for (const n of [1, 2])
      await ctx
        .api()
        .post('/assinaturas')
        .set(a.comToken)
        .send({ ...a.corpo, url_de_destino: `https://recebedor.exemplo/${n}` })
        .expect(201);
    const corrida = await Promise.all(
      [3, 4].map((n) =>
        ctx
          .api()
          .post('/assinaturas')
          .set(a.comToken)
          .send({ ...a.corpo, url_de_destino: `https://recebedor.exemplo/${n}` }),
      ),
    );
    expect(corrida.map((r) => r.status).sort()).toEqual([201, 429]);
    expect((await linhasDoAssinante(ctx, a.aplicativo.id)).filter((l) => !l.excluidaEm)).toHaveLength(3);
  });

  test('When the application makes more than HUB_ALTERACOES_DE_ASSINATURAS_POR_MINUTO changes in a minute, then 429 muitas_requisicoes with Retry-After, nothing done; another application is not counted', async () => {
    const a = await assinanteComTipo(ctx);
    const { body: criada } = await ctx.api().post('/assinaturas').set(a.comToken).send(a.corpo).expect(201);
    for (let n = 2; n <= 8; n++) {
      const response = await ctx
        .api()
        .patch(`/assinaturas/${criada.id}`)
        .set(a.comToken)
        .send({ maximo_de_tentativas: n });
      expect(response.status).toBe(200);
      expect(response.headers.ratelimit).toMatch(new RegExp(`^"assinaturas";r=${8 - n};t=\\d+$`));
    }
    const alem = await ctx.api().patch(`/assinaturas/${criada.id}`).set(a.comToken).send({ maximo_de_tentativas: 20 });
    expect([alem.status, alem.body.codigo]).toEqual([429, 'muitas_requisicoes']);
    expect(Number(alem.headers['retry-after'])).toBeGreaterThan(0);
    expect(alem.headers['ratelimit-policy']).toBe('"assinaturas";q=8;w=60');
    expect((await ctx.hub.db.assinatura.findUniqueOrThrow({ where: { id: criada.id } })).maximoDeTentativas).toBe(8);
    const outro = await assinanteComTipo(ctx);
    await ctx.api().post('/assinaturas').set(outro.comToken).send(outro.corpo).expect(201);
    // Reads are not changes: the application still reads its own.
    expect((await ctx.api().get('/assinaturas').set(a.comToken)).status).toBe(200);
  });
});
