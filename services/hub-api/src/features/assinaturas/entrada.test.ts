import {
  auth,
  type Contexto,
  criarAplicativo,
  criarTipo,
  criarVersao,
  encerrarContexto,
  iniciarContexto,
} from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

/** A subscriber and a type with version 1; the body of a subscription to it at `url`. */
async function cenario(url = 'http://127.0.0.1:8086/webhook') {
  const assinante = await criarAplicativo(ctx, 'Assinante');
  const tipo = await criarTipo(ctx);
  await criarVersao(ctx, tipo.id);
  return {
    aplicativo_assinante_id: assinante.id,
    tipo_de_evento_id: tipo.id,
    versao_do_esquema: 1,
    url_de_destino: url,
  };
}

const criar = (corpo: Record<string, unknown>) => ctx.api().post('/assinatura').set(auth(ctx.todas)).send(corpo);

async function assinaturasDe(aplicativoId: unknown) {
  const response = await ctx
    .api()
    .get('/assinatura/filtro')
    .query({ aplicativo_assinante_id: String(aplicativoId) })
    .set(auth(ctx.todas));
  return response.body as { url_de_destino: string }[];
}

describe('integers of /assinatura fit their columns', () => {
  test('When versao_do_esquema is 2147483648, then 422 at /versao_do_esquema, not a 500, and nothing is stored', async () => {
    const corpo = await cenario();
    const response = await criar({ ...corpo, versao_do_esquema: 2_147_483_648 });
    expect(response.status).toBe(422);
    expect(response.body.codigo).toBe('dados_invalidos');
    expect(response.body.erros.map((e: { caminho: string }) => e.caminho)).toEqual(['/versao_do_esquema']);
    expect(await assinaturasDe(corpo.aplicativo_assinante_id)).toEqual([]);
  });

  test('When versao_do_esquema is 2147483647, the largest the column holds, then 422 versao_inexistente', async () => {
    const response = await criar({ ...(await cenario()), versao_do_esquema: 2_147_483_647 });
    expect(response.status).toBe(422);
    expect(response.body.codigo).toBe('versao_inexistente');
  });

  test('When the OpenAPI document is read, then every integer of the registry bodies shows its maximum', async () => {
    const { body: openapi } = await ctx.api().get('/openapi.json');
    const corpo = (path: string, method: string) =>
      openapi.paths[path][method].requestBody.content['application/json'].schema.properties;
    expect(corpo('/assinatura', 'post').versao_do_esquema).toMatchObject({ minimum: 1, maximum: 2_147_483_647 });
    expect(corpo('/assinatura', 'post').maximo_de_tentativas).toMatchObject({ minimum: 1, maximum: 50 });
    expect(corpo('/assinatura/{id}', 'patch').maximo_de_tentativas.anyOf[0]).toMatchObject({ maximum: 50 });
    expect(corpo('/tipo-de-evento', 'post').retencao_em_dias).toMatchObject({ minimum: 1, maximum: 3650 });
  });
});

describe('url_de_destino', () => {
  test.each([
    ['CR LF inside (header injection)', 'http://127.0.0.1:8086/x\r\nX-Injected: 1'],
    ['a tab inside, which the parser would strip', 'http://127.0.0.1:8086/a\tb'],
    ['a NUL', 'http://127.0.0.1:8086/x\u0000'],
    ['a trailing newline, which trimming would drop', 'http://127.0.0.1:8086/x\n'],
    ['a C1 control character', 'http://127.0.0.1:8086/x\u0085'],
    ['no host (http:///x)', 'http:///x'],
    ['no slashes (http:x)', 'http:x'],
    ['backslashes for slashes', 'http:\\\\127.0.0.1\\x'],
    ['port 0', 'http://127.0.0.1:0/x'],
    ['port 65536', 'http://127.0.0.1:65536/x'],
    ['credentials', 'https://user:secret@recebedor.example/x'],
    ['another scheme', 'ftp://recebedor.example/x'],
  ])('When the URL has %s, then POST is 422 at /url_de_destino and nothing is stored', async (_caso, url) => {
    const corpo = await cenario(url);
    const response = await criar(corpo);
    expect(response.status).toBe(422);
    expect(response.body.erros).toEqual([{ caminho: '/url_de_destino', mensagem: expect.any(String) }]);
    expect(await assinaturasDe(corpo.aplicativo_assinante_id)).toEqual([]);
  });

  test('When PATCH sends a URL with CR LF or without a host, then 422 and the stored URL stays', async () => {
    const criada = await criar(await cenario());
    expect(criada.status).toBe(201);
    for (const url_de_destino of ['http://127.0.0.1:8086/x\r\nX-Injected: 1', 'http:///x', 'http://127.0.0.1:0/']) {
      const response = await ctx
        .api()
        .patch(`/assinatura/${criada.body.id}`)
        .set(auth(ctx.todas))
        .send({ url_de_destino });
      expect({ url_de_destino, status: response.status }).toEqual({ url_de_destino, status: 422 });
    }
    const lida = await ctx.api().get(`/assinatura/${criada.body.id}`).set(auth(ctx.todas));
    expect(lida.body.url_de_destino).toBe('http://127.0.0.1:8086/webhook');
  });

  test('When the URL is written loosely, then it is stored normalised (scheme and host lower case, default port dropped, dots resolved)', async () => {
    const response = await criar(await cenario('  HTTP://LocalHost:80/a/./b/../c?x=1  '));
    expect(response.status).toBe(201);
    expect(response.body.url_de_destino).toBe('http://localhost/a/c?x=1');
    const porta = await criar(await cenario('http://127.0.0.1:65535/'));
    expect(porta.body.url_de_destino).toBe('http://127.0.0.1:65535/');
  });

  test('When two spellings of one URL subscribe the same application, type and version, then the second is 409', async () => {
    const corpo = await cenario('http://127.0.0.1:8086/webhook');
    expect((await criar(corpo)).status).toBe(201);
    const response = await criar({ ...corpo, url_de_destino: 'HTTP://127.0.0.1:8086/./webhook' });
    expect(response.status).toBe(409);
    expect(response.body.codigo).toBe('assinatura_duplicada');
  });
});
