import { auth, type Contexto, criarAplicativo, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { assinar, type Cenario, cenario, publicar } from '../publicacao/cenario.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

/** Any object as dados: the filters, not the schema, are under test. */
const ESQUEMA_LIVRE = { type: 'object' };

const dadosSP = { cliente: { uf: 'SP', nome: 'Ana' }, valor: 150, itens: [{ sku: 'A-1' }] };

type Resposta = Awaited<ReturnType<typeof publicar>>;

/** The subscriptions the event's deliveries go to: as the publication answered, and as stored. */
async function destinatarias(response: Resposta): Promise<{ resposta: string[]; guardadas: string[] }> {
  expect(response.status).toBe(201);
  const guardadas = await ctx.hub.db.entrega.findMany({ where: { eventoId: response.body.id } });
  return {
    resposta: response.body.entregas.map((e: { assinatura_id: string }) => e.assinatura_id).sort(),
    guardadas: guardadas.map((e) => e.assinaturaId).sort(),
  };
}

const ambas = (ids: string[]) => ({ resposta: [...ids].sort(), guardadas: [...ids].sort() });

/** A body for POST /assinatura: a new subscriber to the scenario's type. */
async function corpoDeAssinatura(c: Cenario, extra: Record<string, unknown> = {}) {
  const assinante = await criarAplicativo(ctx, 'Assinante');
  return {
    aplicativo_assinante_id: assinante.id,
    tipo_de_evento_id: c.tipo.id,
    versao_do_esquema: 1,
    url_de_destino: `https://recebedor.example/${assinante.id}`,
    ...extra,
  };
}

const patch = (id: string, body: Record<string, unknown>) =>
  ctx.api().patch(`/assinatura/${id}`).set(auth(ctx.todas)).send(body);

describe('assinatura.filtro on the subscription routes', () => {
  test('When a subscription is created with a filter, then it is stored and shown in the detail, the page and the filter list; without one it is null', async () => {
    const c = await cenario(ctx, ESQUEMA_LIVRE);
    const filtro = { $or: [{ 'dados.cliente.uf': { $in: ['SP', 'RJ'] } }, { entidade_id: { $regex: '^VIP-' } }] };
    const com = await assinar(ctx, c.tipo.id, 1, { filtro });
    const sem = await assinar(ctx, c.tipo.id);
    const detalhe = await ctx.api().get(`/assinatura/${com.id}`).set(auth(ctx.leitor));
    expect(detalhe.status).toBe(200);
    expect(detalhe.body.filtro).toEqual(filtro);
    expect(com).toMatchObject({ filtro });
    expect((await ctx.api().get(`/assinatura/${sem.id}`).set(auth(ctx.leitor))).body.filtro).toBeNull();
    const pagina = await ctx.api().get('/assinatura').query({ tipo_de_evento_id: c.tipo.id }).set(auth(ctx.leitor));
    const naPagina = Object.fromEntries(
      pagina.body.itens.map((a: { id: string; filtro: unknown }) => [a.id, a.filtro]),
    );
    expect(naPagina).toEqual({ [com.id]: filtro, [sem.id]: null });
    const lista = await ctx
      .api()
      .get('/assinatura/filtro')
      .query({ tipo_de_evento_id: c.tipo.id })
      .set(auth(ctx.leitor));
    expect(Object.fromEntries(lista.body.map((a: { id: string; filtro: unknown }) => [a.id, a.filtro]))).toEqual(
      naPagina,
    );
  });

  test('When a filter breaks a rule or passes a limit, then POST is 422 filtro_invalido with the caminho, and nothing is created', async () => {
    const c = await cenario(ctx, ESQUEMA_LIVRE);
    const cem = Array.from({ length: 100 }, (_, i) => `v${i}`);
    const aninhado = (niveis: number): Record<string, unknown> =>
      niveis === 1 ? { tipo: 'x' } : { $not: aninhado(niveis - 1) };
    const condicoes = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`dados.c${i}`, i]));
    const casos: [string, unknown, string][] = [
      ['not an object', 'dados.uf = SP', '/filtro'],
      ['an array', [{ a: 1 }], '/filtro'],
      ['unknown operator', { 'dados.uf': { $like: 'S%' } }, '/filtro/dados.uf/$like'],
      ['unknown combinator', { $nor: [{ a: 1 }] }, '/filtro/$nor'],
      ['empty $or', { $or: [] }, '/filtro/$or'],
      ['$gt of a boolean', { $and: [{ 'dados.valor': { $gt: true } }] }, '/filtro/$and/0/dados.valor/$gt'],
      ['$exists of a string', { a: { $exists: 'yes' } }, '/filtro/a/$exists'],
      ['an empty path step', { 'dados..uf': 'SP' }, '/filtro/dados..uf'],
      ['101 literals', { 'dados.uf': { $in: [...cem, 'x'] } }, '/filtro/dados.uf/$in'],
      ['a 257-character regex', { 'dados.uf': { $regex: 'a'.repeat(257) } }, '/filtro/dados.uf/$regex'],
      ['a backreference', { 'dados.uf': { $regex: '(S)\\1' } }, '/filtro/dados.uf/$regex'],
      [
        '5 regexes',
        { $or: Array.from({ length: 5 }, () => ({ 'dados.s': { $regex: '[^x]{200}[^a]' } })) },
        '/filtro/$or/4/dados.s/$regex',
      ],
      ['a regex of 1,002 instructions', { 'dados.s': { $regex: '[^x]{1000}' } }, '/filtro/dados.s/$regex'],
      ['9 levels', aninhado(9), `/filtro${'/$not'.repeat(8)}`],
      ['65 conditions', condicoes(65), '/filtro/dados.c64'],
      ['more than 4 KiB', { 'dados.nota': 'x'.repeat(4096) }, '/filtro'],
    ];
    for (const [caso, filtro, caminho] of casos) {
      const corpo = await corpoDeAssinatura(c, { filtro });
      const response = await ctx.api().post('/assinatura').set(auth(ctx.todas)).send(corpo);
      expect({ caso, status: response.status, codigo: response.body.codigo, caminhos: response.body.erros }).toEqual({
        caso,
        status: 422,
        codigo: 'filtro_invalido',
        caminhos: [{ caminho, mensagem: expect.any(String) }],
      });
    }
    // Right at the limits, a filter is accepted.
    const noLimite = {
      $and: [aninhado(7), { 'dados.uf': { $in: cem, $regex: 'a'.repeat(256) } }],
    };
    const aceita = await ctx
      .api()
      .post('/assinatura')
      .set(auth(ctx.todas))
      .send(await corpoDeAssinatura(c, { filtro: noLimite }));
    expect(aceita.status).toBe(201);
    const todas = await ctx
      .api()
      .get('/assinatura/filtro')
      .query({ tipo_de_evento_id: c.tipo.id })
      .set(auth(ctx.leitor));
    expect(todas.body.map((a: { id: string }) => a.id)).toEqual([aceita.body.id]);
  });

  test('When PATCH sends a filter, then it replaces the one stored; null removes it; absent keeps it; an invalid one changes nothing', async () => {
    const c = await cenario(ctx, ESQUEMA_LIVRE);
    const { id } = await assinar(ctx, c.tipo.id, 1, { filtro: { 'dados.cliente.uf': 'SP' } });
    const novo = { 'dados.valor': { $gte: 100 } };
    expect((await patch(id, { filtro: novo })).body.filtro).toEqual(novo);
    expect((await patch(id, { maximo_de_tentativas: 3 })).body).toMatchObject({
      filtro: novo,
      maximo_de_tentativas: 3,
    });
    const invalido = await patch(id, { filtro: { 'dados.valor': { $gte: [] } }, maximo_de_tentativas: 4 });
    expect(invalido.status).toBe(422);
    expect(invalido.body).toMatchObject({
      codigo: 'filtro_invalido',
      erros: [{ caminho: '/filtro/dados.valor/$gte', mensagem: expect.any(String) }],
    });
    expect((await ctx.api().get(`/assinatura/${id}`).set(auth(ctx.leitor))).body).toMatchObject({
      filtro: novo,
      maximo_de_tentativas: 3,
    });
    expect((await patch(id, { filtro: null })).body.filtro).toBeNull();
    expect((await ctx.hub.db.assinatura.findUnique({ where: { id } }))?.filtro).toBeNull();
  });
});

describe('filters at publication', () => {
  test('When an event is published, then its deliveries are the subscriptions whose filter matches (and those without one), in the answer and in the database', async () => {
    const c = await cenario(ctx, ESQUEMA_LIVRE);
    const todas = await assinar(ctx, c.tipo.id);
    const sp = await assinar(ctx, c.tipo.id, 1, { filtro: { 'dados.cliente.uf': 'SP' } });
    const rj = await assinar(ctx, c.tipo.id, 1, { filtro: { 'dados.cliente.uf': 'RJ' } });
    const caroOuVip = await assinar(ctx, c.tipo.id, 1, {
      filtro: { $or: [{ 'dados.valor': { $gt: 1000 } }, { entidade_id: { $regex: '^VIP-' } }] },
    });
    const semCpf = await assinar(ctx, c.tipo.id, 1, {
      filtro: { 'dados.cliente.cpf': { $exists: false }, tipo: c.tipo.nome, assinatura_id: { $ne: 'outra' } },
    });
    const nunca = await assinar(ctx, c.tipo.id, 1, { filtro: { $and: [{ 'dados.a': 1 }, { 'dados.a': 2 }] } });

    const r1 = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'P-1', dados: dadosSP }));
    expect(await destinatarias(r1)).toEqual(ambas([todas.id, sp.id, semCpf.id]));
    expect(r1.body.quantidade_de_entregas).toBe(3);

    const rjVip = { cliente: { uf: 'RJ', cpf: '1' }, valor: 10 };
    const r2 = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'VIP-7', dados: rjVip }));
    expect(await destinatarias(r2)).toEqual(ambas([todas.id, rj.id, caroOuVip.id]));

    // A filter that matches nothing never gets a delivery.
    expect(await ctx.hub.db.entrega.count({ where: { assinaturaId: nunca.id } })).toBe(0);

    // The panel reads the same deliveries back.
    const lido = await ctx.api().get(`/evento/${r2.body.id}`).set(auth(ctx.leitor));
    expect(lido.body.entregas.map((e: { assinatura_id: string }) => e.assinatura_id).sort()).toEqual(
      [todas.id, rj.id, caroOuVip.id].sort(),
    );
  });

  test('When a filter is changed by PATCH, then the next publication follows the new filter (the cached subscriptions are dropped)', async () => {
    const c = await cenario(ctx, ESQUEMA_LIVRE);
    const { id } = await assinar(ctx, c.tipo.id, 1, { filtro: { 'dados.cliente.uf': 'SP' } });
    const publicarSP = () => publicar(ctx, c.tokenDoDono, c.corpo({ dados: dadosSP }));
    expect(await destinatarias(await publicarSP())).toEqual(ambas([id]));
    expect((await patch(id, { filtro: { 'dados.cliente.uf': 'RJ' } })).status).toBe(200);
    expect(await destinatarias(await publicarSP())).toEqual(ambas([]));
    expect((await patch(id, { filtro: null })).status).toBe(200);
    expect(await destinatarias(await publicarSP())).toEqual(ambas([id]));
  });
});

describe('POST /assinatura/testar-filtro', () => {
  const testar = (body: unknown, token = ctx.leitor) =>
    ctx
      .api()
      .post('/assinatura/testar-filtro')
      .set(auth(token))
      .send(body as object);

  test('When the filter matches { entidade_id, dados }, then 200 corresponde true; when not, false; a null filter matches', async () => {
    const filtro = { 'dados.cliente.uf': 'SP', entidade_id: { $regex: '^P-' } };
    expect(await testar({ filtro, dados: dadosSP, entidade_id: 'P-1' })).toMatchObject({
      status: 200,
      body: { corresponde: true },
    });
    expect((await testar({ filtro, dados: dadosSP, entidade_id: 'Q-1' })).body).toEqual({ corresponde: false });
    // Without entidade_id, the path is missing.
    expect((await testar({ filtro, dados: dadosSP })).body).toEqual({ corresponde: false });
    expect((await testar({ filtro: { entidade_id: { $exists: false } }, dados: 1 })).body).toEqual({
      corresponde: true,
    });
    expect((await testar({ filtro: null, dados: {} })).body).toEqual({ corresponde: true });
    expect((await testar({ filtro: { 'dados.cliente.uf': 'RJ' }, dados: dadosSP }, ctx.todas)).body).toEqual({
      corresponde: false,
    });
  });

  test('When the filter is invalid, then 422 filtro_invalido with the caminho; dados missing is 422 dados_invalidos', async () => {
    const response = await testar({ filtro: { $or: [{ a: { $regex: '(?<=a)b' } }] }, dados: {} });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({
      codigo: 'filtro_invalido',
      erros: [{ caminho: '/filtro/$or/0/a/$regex', mensagem: expect.stringContaining('RE2') }],
    });
    const semDados = await testar({ filtro: {} });
    expect(semDados.status).toBe(422);
    expect(semDados.body.codigo).toBe('dados_invalidos');
    expect((await testar({ filtro: {}, dados: {}, extra: 1 })).status).toBe(422);
  });

  test('When dados is over 64 KiB as JSON text, then 422 dados_invalidos at /dados, and at 64 KiB the filter runs', async () => {
    // {"t":"…"}: 8 bytes around the string.
    const comTexto = (bytes: number) => ({ t: 'x'.repeat(bytes - 8) });
    const grande = await testar({ filtro: { 'dados.t': { $exists: true } }, dados: comTexto(64 * 1024 + 1) });
    expect(grande.status).toBe(422);
    expect(grande.body).toMatchObject({ codigo: 'dados_invalidos', erros: [{ caminho: '/dados' }] });
    expect(grande.body.erros[0].mensagem).toContain('64 KiB');
    const noLimite = await testar({ filtro: { 'dados.t': { $exists: true } }, dados: comTexto(64 * 1024) });
    expect(noLimite).toMatchObject({ status: 200, body: { corresponde: true } });
  });

  test('When the caller lacks monitoramento.ler, then 403; without a token, 401; nothing is written either way', async () => {
    const antes = await ctx.hub.db.assinatura.count();
    expect((await testar({ filtro: {}, dados: {} }, ctx.semMonitoramento)).status).toBe(403);
    expect((await ctx.api().post('/assinatura/testar-filtro').send({ filtro: {}, dados: {} })).status).toBe(401);
    expect((await testar({ filtro: { a: 1 }, dados: { a: 1 } }, ctx.leitor)).status).toBe(200);
    expect(await ctx.hub.db.assinatura.count()).toBe(antes);
  });
});
