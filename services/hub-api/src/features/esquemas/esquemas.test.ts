import {
  auth,
  type Contexto,
  criarAplicativo,
  criarTipo,
  criarVersao,
  encerrarContexto,
  iniciarContexto,
  unico,
} from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

// Key order on purpose not alphabetical: the schema comes back exactly as registered.
const ESQUEMA = {
  title: 'Pedido',
  type: 'object',
  properties: { z: { type: 'string' }, a: { type: 'integer' } },
  additionalProperties: false,
};

async function registrado() {
  const tipo = await criarTipo(ctx);
  await criarVersao(ctx, tipo.id, { type: 'object' });
  await criarVersao(ctx, tipo.id, ESQUEMA);
  return tipo.nome as string;
}

describe('GET /esquema/{tipo_de_evento_nome}/{versao}', () => {
  test('When a signed-in user reads a version, then the raw schema comes as application/schema+json', async () => {
    const nome = await registrado();
    const response = await ctx
      .api()
      .get(`/esquema/${nome}/2`)
      .set(auth(ctx.leitor))
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => done(null, text));
      });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/schema\+json/);
    expect(response.body).toBe(JSON.stringify(ESQUEMA));
  });

  test('When any user with an active access reads it, even without monitoramento, then it answers', async () => {
    const nome = await registrado();
    expect((await ctx.api().get(`/esquema/${nome}/1`).set(auth(ctx.semMonitoramento))).status).toBe(200);
  });

  test('When a registered application reads it with its token, then it answers; unregistered or switched off, 403', async () => {
    const nome = await registrado();
    const aplicativo = await criarAplicativo(ctx, 'Assinante');
    const token = await ctx.identity.appToken(aplicativo.client_id as string);
    expect((await ctx.api().get(`/esquema/${nome}/2`).set(auth(token))).status).toBe(200);
    const desconhecido = await ctx
      .api()
      .get(`/esquema/${nome}/2`)
      .set(auth(await ctx.identity.appToken(unico('ninguem'))));
    expect(desconhecido.status).toBe(403);
    expect(desconhecido.body.codigo).toBe('aplicativo_nao_registrado');
    await ctx.api().patch(`/aplicativo/${aplicativo.id}`).set(auth(ctx.todas)).send({ ativo: false });
    const inativo = await ctx.api().get(`/esquema/${nome}/2`).set(auth(token));
    expect(inativo.status).toBe(403);
    expect(inativo.body.codigo).toBe('aplicativo_inativo');
  });

  test('When the seeded colaborador.atualizado v1 is read, then it describes a collaborator', async () => {
    const response = await ctx
      .api()
      .get('/esquema/colaborador.atualizado/1')
      .set(auth(await ctx.identity.appToken('identidade')));
    expect(response.status).toBe(200);
    const esquema = JSON.parse(response.text);
    expect(esquema.required).toEqual(['termoauth_id', 'email', 'nome', 'ativo', 'funcao']);
    expect(esquema.properties.funcao.type).toEqual(['object', 'null']);
  });

  test('When there is no token or a forged one, then 401', async () => {
    const nome = await registrado();
    expect((await ctx.api().get(`/esquema/${nome}/1`)).status).toBe(401);
    const forged = await ctx.identity.craft({ claims: { typ: 'aplicativo' }, issuer: 'https://outro.example' });
    expect((await ctx.api().get(`/esquema/${nome}/1`).set(auth(forged))).status).toBe(401);
  });

  test('When the type or the version does not exist, then 404', async () => {
    const nome = await registrado();
    for (const path of [
      `/esquema/${nome}/3`,
      `/esquema/${nome}/0`,
      `/esquema/${nome}/x`,
      '/esquema/nao.existe/1',
      '/esquema/Maiusculo/1',
    ]) {
      expect({ path, status: (await ctx.api().get(path).set(auth(ctx.leitor))).status }).toEqual({ path, status: 404 });
    }
  });
});
