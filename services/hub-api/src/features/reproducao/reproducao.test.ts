import { uuidv7 } from '@hub/database';
import { auth, expectPagina, ISO_MS } from '../../contexto.test-support';
import { type Cenario, criarCenario } from '../eventos/linhas.test-support';
import { type ContextoComFila, iniciarContextoComFila } from '../fila/fila-de-erro.test-support';
import { aoFim, guardarEventos, outraAssinatura, reproduzir } from './reproducao.test-support';

// REPLAY_MAX_EVENTS 3: a range of four stored events is over the limit.
let ctx: ContextoComFila;
let c: Cenario;
beforeAll(async () => {
  ctx = await iniciarContextoComFila({ REPLAY_MAX_EVENTS: '3', HUB_REPRODUCAO_INTERVALO: '100ms' });
  c = await criarCenario(ctx);
}, 60_000);
afterAll(() => ctx?.encerrar());

const inicio = new Date('2024-03-01T00:00:00.000Z');
const faixa = { desde: '2024-03-01T00:00:00.000Z', ate: '2024-03-01T00:00:10.000Z' };
const quantas = () => ctx.hub.db.reproducao.count();
const tokenDoAssinante = async (assinanteId: string) => {
  const aplicativo = await ctx.api().get(`/aplicativo/${assinanteId}`).set(auth(ctx.todas));
  return ctx.identity.appToken(aplicativo.body.client_id as string);
};

describe('who may ask for and read replays', () => {
  test('When no token is sent, then 401; reading needs monitoramento.ler; asking and cancelling need monitoramento.criar', async () => {
    const id = uuidv7();
    expect((await ctx.api().get('/reproducao')).status).toBe(401);
    expect((await ctx.api().post(`/assinatura/${c.assinaturaId}/reproduzir`).send(faixa)).status).toBe(401);
    expect((await ctx.api().get('/reproducao').set(auth(ctx.semMonitoramento))).status).toBe(403);
    expect((await ctx.api().get('/reproducao').set(auth(ctx.leitor))).status).toBe(200);
    const leitor = await ctx.api().post(`/assinatura/${c.assinaturaId}/reproduzir`).set(auth(ctx.leitor)).send(faixa);
    expect([leitor.status, leitor.body.codigo]).toEqual([403, 'sem_permissao']);
    expect((await ctx.api().post(`/reproducao/${id}/cancelar`).set(auth(ctx.leitor))).status).toBe(403);
    expect(await quantas()).toBe(0);
  });

  test('When an application token reaches the panel’s routes, or a panel token the application’s, then 401 tipo_de_token_invalido', async () => {
    const app = await tokenDoAssinante(c.assinanteId);
    const painel = await ctx.api().post(`/assinatura/${c.assinaturaId}/reproduzir`).set(auth(app)).send(faixa);
    expect([painel.status, painel.body.codigo]).toEqual([401, 'tipo_de_token_invalido']);
    const proprio = await ctx.api().post(`/assinaturas/${c.assinaturaId}/reproduzir`).set(auth(ctx.todas)).send(faixa);
    expect([proprio.status, proprio.body.codigo]).toEqual([401, 'tipo_de_token_invalido']);
    expect(await quantas()).toBe(0);
  });
});

describe('asking for a replay', () => {
  test('When asked, then 202 with the replay, pendente or further, and it concludes; GET /reproducao/{id} and the page answer it', async () => {
    await guardarEventos(ctx.hub.db, c, 2, inicio);
    const r = await reproduzir(ctx, c.assinaturaId, faixa);
    expect(Object.keys(r).sort()).toEqual(
      [
        'id',
        'assinatura_id',
        'desde',
        'ate',
        'incluir_entregues',
        'situacao',
        'quantidade_de_eventos',
        'criadas',
        'reenviadas',
        'ignoradas',
        'solicitada_por',
        'criada_em',
        'concluida_em',
      ].sort(),
    );
    expect(r).toMatchObject({
      assinatura_id: c.assinaturaId,
      ...faixa,
      incluir_entregues: false,
      situacao: 'pendente',
      quantidade_de_eventos: 2,
      concluida_em: null,
    });
    expect(r.criada_em).toMatch(ISO_MS);
    expect(r.solicitada_por).toMatch(/^monitor\./);
    const fim = await aoFim(ctx, r.id);
    expect(fim).toMatchObject({ situacao: 'concluida', criadas: 2, reenviadas: 0, ignoradas: 0 });
    expect(fim.concluida_em).toMatch(ISO_MS);

    const outra = await outraAssinatura(ctx, c);
    const daOutra = await reproduzir(ctx, outra, faixa);
    await aoFim(ctx, daOutra.id);
    const pagina = await ctx.api().get(`/reproducao?assinatura_id=${c.assinaturaId}`).set(auth(ctx.leitor));
    expectPagina(pagina.body, 1, 10);
    expect(pagina.body.itens.map((i) => i.id)).toEqual([r.id]);
    const todas = await ctx.api().get('/reproducao?tamanho=1').set(auth(ctx.leitor));
    expectPagina(todas.body, 1, 1);
    expect([todas.body.itens[0]!.id, todas.body.total]).toEqual([daOutra.id, 2]);
  });

  test('When the subscribing application asks for its own subscription, then 202 solicitada_por its client_id; another application’s subscription is 404', async () => {
    const app = await tokenDoAssinante(c.assinanteId);
    const r = await ctx.api().post(`/assinaturas/${c.assinaturaId}/reproduzir`).set(auth(app)).send(faixa);
    expect(r.status).toBe(202);
    const aplicativo = await ctx.api().get(`/aplicativo/${c.assinanteId}`).set(auth(ctx.todas));
    expect(r.body.solicitada_por).toBe(aplicativo.body.client_id);
    const outro = await criarCenario(ctx);
    const antes = await quantas();
    const alheia = await ctx.api().post(`/assinaturas/${outro.assinaturaId}/reproduzir`).set(auth(app)).send(faixa);
    expect([alheia.status, alheia.body.codigo]).toEqual([404, 'nao_encontrado']);
    expect(alheia.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(await quantas()).toBe(antes);
    // Its replays, with their progress, under its own subscription; not under another's.
    const lista = await ctx
      .api()
      .get(`/assinaturas/${c.assinaturaId}/reproducoes`)
      .set(auth(app))
      .query({ tamanho: 5 });
    expect(lista.status).toBe(200);
    expect(lista.body).toMatchObject({ pagina: 1, tamanho: 5 });
    expect(lista.body.itens.map((i: { id: string }) => i.id)).toContain(r.body.id);
    expect(lista.body.itens.every((i: { assinatura_id: string }) => i.assinatura_id === c.assinaturaId)).toBe(true);
    const doOutro = await ctx.api().get(`/assinaturas/${outro.assinaturaId}/reproducoes`).set(auth(app));
    expect([doOutro.status, doOutro.body.codigo]).toEqual([404, 'nao_encontrado']);
    const doPainel = await ctx.api().get(`/assinaturas/${c.assinaturaId}/reproducoes`).set(auth(ctx.todas));
    expect([doPainel.status, doPainel.body.codigo]).toEqual([401, 'tipo_de_token_invalido']);
  });
});

describe('bad input changes nothing', () => {
  const casos: [string, unknown][] = [
    ['desde after ate', { desde: faixa.ate, ate: faixa.desde }],
    ['a date without offset', { desde: '2024-03-01T00:00:00', ate: faixa.ate }],
    ['a date that is not one', { desde: '2024-02-30T00:00:00Z', ate: faixa.ate }],
    ['a NUL byte in a date', { desde: '2024-03-01T00:00:00.000Z\u0000', ate: faixa.ate }],
    ['ate missing', { desde: faixa.desde }],
    ['year 0000 (PostgreSQL refuses it)', { desde: '0000-01-01T00:00:00Z', ate: faixa.ate }],
    ['an offset that puts 0001-01-01 in year 0000', { desde: '0001-01-01T00:00:00+01:00', ate: faixa.ate }],
    // Year 10000 in UTC: stored, it came back an Invalid Date, GET /reproducao answered 500 and the
    // runner threw at it, holding up every replay behind it.
    ['an offset that puts 9999-12-31 in year 10000', { desde: faixa.desde, ate: '9999-12-31T23:59:59-23:59' }],
    ['an unknown field', { ...faixa, assinatura_id: '0190a1b2-0000-7000-8000-000000000000' }],
    ['incluir_entregues not a boolean', { ...faixa, incluir_entregues: 'true' }],
    ['an array body', [faixa]],
  ];
  test.each(casos)(
    'When the body has %s, then 422 dados_invalidos in problem+json and nothing stored',
    async (_, corpo) => {
      const antes = await quantas();
      const response = await ctx
        .api()
        .post(`/assinatura/${c.assinaturaId}/reproduzir`)
        .set(auth(ctx.todas))
        .send(corpo as object);
      expect([response.status, response.body.codigo]).toEqual([422, 'dados_invalidos']);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body.erros.length).toBeGreaterThan(0);
      expect(await quantas()).toBe(antes);
      expect((await ctx.api().get('/reproducao').set(auth(ctx.leitor))).status).toBe(200);
    },
  );

  test('When desde is after ate, then the error is at /ate', async () => {
    const response = await ctx
      .api()
      .post(`/assinatura/${c.assinaturaId}/reproduzir`)
      .set(auth(ctx.todas))
      .send({ desde: faixa.ate, ate: faixa.desde });
    expect(response.body.erros).toEqual([{ caminho: '/ate', mensagem: 'must not be before desde' }]);
  });

  test('When the JSON is malformed, the subscription or the replay unknown, or the id not a uuid, then 400 or 404 and nothing stored', async () => {
    const antes = await quantas();
    const malformado = await ctx
      .api()
      .post(`/assinatura/${c.assinaturaId}/reproduzir`)
      .set({ ...auth(ctx.todas), 'content-type': 'application/json' })
      .send('{"desde": ');
    expect([malformado.status, malformado.body.codigo]).toEqual([400, 'json_invalido']);
    for (const path of [
      `/assinatura/${uuidv7()}/reproduzir`,
      '/assinatura/nao-e-id/reproduzir',
      `/reproducao/${uuidv7()}/cancelar`,
    ])
      expect((await ctx.api().post(path).set(auth(ctx.todas)).send(faixa)).status).toBe(404);
    expect((await ctx.api().get(`/reproducao/${uuidv7()}`).set(auth(ctx.leitor))).status).toBe(404);
    expect((await ctx.api().get('/reproducao?assinatura_id=nao-e-id').set(auth(ctx.leitor))).status).toBe(400);
    expect(await quantas()).toBe(antes);
  });

  test('When the subscription is switched off, then 409 assinatura_inativa and nothing stored', async () => {
    const desligada = await outraAssinatura(ctx, c);
    expect((await ctx.api().patch(`/assinatura/${desligada}`).set(auth(ctx.todas)).send({ ativa: false })).status).toBe(
      200,
    );
    const antes = await quantas();
    const response = await ctx.api().post(`/assinatura/${desligada}/reproduzir`).set(auth(ctx.todas)).send(faixa);
    expect([response.status, response.body.codigo]).toEqual([409, 'assinatura_inativa']);
    expect(await quantas()).toBe(antes);
  });

  test('When the range holds more stored events than REPLAY_MAX_EVENTS, then 422 reproducao_grande_demais naming the limit', async () => {
    const outro = await criarCenario(ctx);
    await guardarEventos(ctx.hub.db, outro, 4, inicio);
    const antes = await quantas();
    const response = await ctx
      .api()
      .post(`/assinatura/${outro.assinaturaId}/reproduzir`)
      .set(auth(ctx.todas))
      .send(faixa);
    expect([response.status, response.body.codigo]).toEqual([422, 'reproducao_grande_demais']);
    expect(response.body.detail).toContain('more than 3 stored events (REPLAY_MAX_EVENTS)');
    expect(await quantas()).toBe(antes);
    // Three are within it.
    expect(
      (await reproduzir(ctx, outro.assinaturaId, { ...faixa, ate: '2024-03-01T00:00:02.000Z' })).quantidade_de_eventos,
    ).toBe(3);
  });
});

describe('one replay that fails', () => {
  test('When the oldest open replay cannot take a batch, then the replays after it still run', async () => {
    // A row the runner cannot work (year 10000, read back by Prisma as an Invalid Date), the oldest
    // open one: before, each round threw at it and no replay behind it ever ran.
    const quebrada = uuidv7(Date.parse('2000-01-01T00:00:00Z'));
    await ctx.hub.db.$executeRaw`
      insert into reproducao (id, assinatura_id, desde, ate, incluir_entregues, situacao, quantidade_de_eventos,
                              solicitada_por, criada_em, atualizada_em)
      values (${quebrada}::uuid, ${c.assinaturaId}::uuid, '10000-01-01T00:00:00Z', '10000-01-01T00:00:00Z', false,
              'pendente', 0, 'teste', '2000-01-01T00:00:00Z', '2000-01-01T00:00:00Z')`;
    try {
      const outra = await outraAssinatura(ctx, c);
      await guardarEventos(ctx.hub.db, c, 1, new Date('2024-05-01T00:00:00.000Z'));
      const r = await reproduzir(ctx, outra, { desde: '2024-05-01T00:00:00.000Z', ate: '2024-05-01T00:00:01.000Z' });
      expect(await aoFim(ctx, r.id)).toMatchObject({ situacao: 'concluida', criadas: 1 });
    } finally {
      await ctx.hub.db.$executeRaw`delete from reproducao where id = ${quebrada}::uuid`;
    }
  });
});

describe('cancelling', () => {
  test('When a replay that ended is cancelled, then 409 reproducao_encerrada and it stays as it was', async () => {
    const r = await aoFim(ctx, (await reproduzir(ctx, c.assinaturaId, faixa)).id);
    const response = await ctx.api().post(`/reproducao/${r.id}/cancelar`).set(auth(ctx.todas));
    expect([response.status, response.body.codigo]).toEqual([409, 'reproducao_encerrada']);
    expect((await ctx.api().get(`/reproducao/${r.id}`).set(auth(ctx.leitor))).body).toEqual(r);
  });
});
