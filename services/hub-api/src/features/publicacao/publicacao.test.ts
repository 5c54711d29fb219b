import {
  auth,
  type Contexto,
  criarAplicativo,
  criarVersao,
  encerrarContexto,
  ISO_MS,
  iniciarContexto,
} from '../../contexto.test-support';
import { trabalhosDasEntregas } from '../entregas/trabalho';
import { assinar, type Cenario, cenario, emailDoToken, publicar } from './cenario.test-support';
import { observarTrabalhos } from './trabalhos.test-support';

let ctx: Contexto;
let publicados: Awaited<ReturnType<typeof observarTrabalhos>>;
beforeAll(async () => {
  ctx = await iniciarContexto();
  publicados = await observarTrabalhos(ctx.hub);
});

/** The one job publication sent for each delivery (right after its commit, not through the outbox). */
const trabalhosDe = async (ids: string[]) => [...(await publicados.trabalhos(ids)).values()].map(([t]) => t!);
afterAll(() => encerrarContexto(ctx));

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MISSING = '01900000-0000-7000-8000-00000000ffff';

const recusados = (codigo: string) => ctx.hub.db.eventoRecusado.findMany({ where: { codigo } });

async function patch(path: string, body: Record<string, unknown>) {
  const response = await ctx.api().patch(path).set(auth(ctx.todas)).send(body);
  expect(response.status).toBe(200);
}

describe('POST /eventos: the rules of contract §4.3 r2', () => {
  test('When an application publishes, then 201 with a UUIDv7 made by the hub, entidade_id trimmed and ocorrido_em defaulting to the time of receipt', async () => {
    const c = await cenario(ctx);
    const response = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: '  pedido-7  ', id: undefined }));
    expect(response.status).toBe(201);
    expect(response.body.id).toMatch(UUIDV7);
    expect(response.body).toMatchObject({
      tipo_de_evento_id: c.tipo.id,
      tipo_de_evento_nome: c.tipo.nome,
      versao_do_esquema: 1,
      aplicativo_publicador_id: c.dono.id,
      aplicativo_publicador_nome: 'Dono',
      entidade_id: 'pedido-7',
      publicado_pelo_email: null,
      dados: { numero: 'A-1', valor: 10 },
      entregas: [],
      quantidade_de_entregas: 0,
    });
    expect(response.body.recebido_em).toMatch(ISO_MS);
    expect(response.body.ocorrido_em).toBe(response.body.recebido_em);
  });

  test('When ocorrido_em is given with an offset, then it is kept as that instant', async () => {
    const c = await cenario(ctx);
    const response = await publicar(ctx, c.tokenDoDono, c.corpo({ ocorrido_em: '2026-01-02T03:04:05.678-03:00' }));
    expect(response.status).toBe(201);
    expect(response.body.ocorrido_em).toBe('2026-01-02T06:04:05.678Z');
  });

  test('When ocorrido_em is an instant PostgreSQL cannot hold (year 0000 or 10000 in UTC), then 422 at /ocorrido_em, not 500; the edges of 0001 and 9999 are accepted', async () => {
    const c = await cenario(ctx);
    for (const ocorrido_em of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-23:59']) {
      const response = await publicar(ctx, c.tokenDoDono, c.corpo({ ocorrido_em }));
      expect([ocorrido_em, response.status, response.body.erros?.[0]?.caminho]).toEqual([
        ocorrido_em,
        422,
        '/ocorrido_em',
      ]);
    }
    for (const [ocorrido_em, guardado] of [
      ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ]) {
      const response = await publicar(ctx, c.tokenDoDono, c.corpo({ ocorrido_em }));
      expect([response.status, response.body.ocorrido_em]).toEqual([201, guardado]);
    }
  });

  test('When entidade_id has 201 characters after trimming or only spaces, then 422; 200 surrounded by spaces is accepted', async () => {
    const c = await cenario(ctx);
    for (const entidade_id of [`  ${'x'.repeat(201)} `, '   ']) {
      const response = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id }));
      expect(response.status).toBe(422);
      expect(response.body.erros[0].caminho).toBe('/entidade_id');
    }
    const aceito = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: ` ${'y'.repeat(200)} ` }));
    expect(aceito.status).toBe(201);
    expect(aceito.body.entidade_id).toBe('y'.repeat(200));
  });

  test('When dados repeats a name within one object (a NUL, a lone surrogate or 5,000 levels in the copy JSON.parse drops), then 422 at /dados and nothing stored; the same values in distinct names pass', async () => {
    const c = await cenario(ctx, { type: 'object' });
    const texto = (dados: string) => JSON.stringify(c.corpo({ dados: 0 })).replace('"dados":0', `"dados":${dados}`);
    const fundo = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    for (const dados of [
      '{"a":"\\u0000","a":"ok"}',
      '{"a":"\\ud800","a":"ok"}',
      `{"a":${fundo},"a":1}`,
      '[{"b":{"c":1,"c":2}}]',
    ]) {
      const response = await publicar(ctx, c.tokenDoDono, texto(dados), { 'content-type': 'application/json' });
      expect({ dados: dados.slice(0, 30), status: response.status }).toEqual({
        dados: dados.slice(0, 30),
        status: 422,
      });
      expect(response.body).toMatchObject({ codigo: 'dados_invalidos', erros: [{ caminho: '/dados' }] });
    }
    expect(await ctx.hub.db.evento.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(0);
    const aceito = await publicar(ctx, c.tokenDoDono, texto('{"a":"ok","b":{"a":[1,{"a":":"}]},"c":"x:y"}'), {
      'content-type': 'application/json',
    });
    expect(aceito.status).toBe(201);
    expect((await ctx.api().get(`/eventos/${aceito.body.id}`).set(auth(c.tokenDoDono))).body.dados).toEqual({
      a: 'ok',
      b: { a: [1, { a: ':' }] },
      c: 'x:y',
    });
  });

  test('When dados breaks 120 rules of the schema, then 422 dados_invalidos with exactly 50 erros', async () => {
    const propriedades = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`c${i}`, { type: 'string' }]));
    const c = await cenario(ctx, { type: 'object', properties: propriedades });
    const dados = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`c${i}`, i]));
    const response = await publicar(ctx, c.tokenDoDono, c.corpo({ dados }));
    expect(response.status).toBe(422);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.codigo).toBe('dados_invalidos');
    expect(response.body.erros).toHaveLength(50);
    expect(response.body.erros[0]).toEqual({
      caminho: expect.stringMatching(/^\/dados\/c\d+$/),
      mensagem: expect.any(String),
    });
    expect(await ctx.hub.db.evento.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(0);
  });

  test('When the type is switched off, then 409 tipo_de_evento_inativo, stored as refused', async () => {
    const c = await cenario(ctx);
    await patch(`/tipo-de-evento/${c.tipo.id}`, { ativo: false });
    const response = await publicar(ctx, c.tokenDoDono, c.corpo());
    expect(response.status).toBe(409);
    expect(response.body.codigo).toBe('tipo_de_evento_inativo');
    const [recusa] = (await recusados('tipo_de_evento_inativo')).filter((r) => r.tipoDeEventoId === c.tipo.id);
    expect(recusa).toMatchObject({
      statusHttp: 409,
      clientId: c.dono.client_id,
      aplicativoId: c.dono.id,
      versaoDoEsquema: 1,
    });
    expect(JSON.parse(recusa!.corpo!)).toEqual(c.corpo());
  });

  test('When the schema version is switched off, then 409 versao_desativada, stored as refused', async () => {
    const c = await cenario(ctx);
    const versao = await ctx
      .api()
      .get('/versao-de-esquema/filtro')
      .query({ tipo_de_evento_id: c.tipo.id })
      .set(auth(ctx.todas));
    await patch(`/versao-de-esquema/${versao.body[0].id}`, { ativa: false });
    const response = await publicar(ctx, c.tokenDoDono, c.corpo());
    expect(response.status).toBe(409);
    expect(response.body.codigo).toBe('versao_desativada');
    expect((await recusados('versao_desativada')).some((r) => r.tipoDeEventoId === c.tipo.id)).toBe(true);
  });

  test('When the body names a version the type does not have, then 422 versao_inexistente at /versao_do_esquema; an unknown type is 422 tipo_de_evento_inexistente', async () => {
    const c = await cenario(ctx);
    const semVersao = await publicar(ctx, c.tokenDoDono, c.corpo({ versao_do_esquema: 9 }));
    expect(semVersao.status).toBe(422);
    expect(semVersao.body).toMatchObject({ codigo: 'versao_inexistente', erros: [{ caminho: '/versao_do_esquema' }] });
    const semTipo = await publicar(ctx, c.tokenDoDono, c.corpo({ tipo_de_evento_id: MISSING }));
    expect(semTipo.status).toBe(422);
    expect(semTipo.body).toMatchObject({
      codigo: 'tipo_de_evento_inexistente',
      erros: [{ caminho: '/tipo_de_evento_id' }],
    });
  });

  test('When dados holds a 20-digit integer, then the answer, GET and the delivery job carry every digit', async () => {
    const c = await cenario(ctx, { type: 'object' });
    await assinar(ctx, c.tipo.id);
    const texto = `{"tipo_de_evento_id":"${c.tipo.id}","versao_do_esquema":1,"entidade_id":"e","dados":{"n": 12345678901234567890123,"x":[1.0e2]}}`;
    const response = await ctx
      .api()
      .post('/eventos')
      .set({ ...auth(c.tokenDoDono), 'content-type': 'application/json' })
      .send(texto);
    expect(response.status).toBe(201);
    expect(response.text).toContain('"dados":{"n": 12345678901234567890123,"x":[1.0e2]}');
    const lido = await ctx.api().get(`/eventos/${response.body.id}`).set(auth(c.tokenDoDono));
    expect(lido.status).toBe(200);
    expect(lido.text).toContain('"dados":{"n": 12345678901234567890123,"x":[1.0e2]}');
    const [trabalho] = await trabalhosDe([response.body.entregas[0].id]);
    expect(trabalho!.corpo).toContain('"dados":{"n": 12345678901234567890123,"x":[1.0e2]}');
  });
});

describe('deliveries', () => {
  test('When a type has subscriptions, then one pendente delivery per active, not deleted subscription of the same version, with every Entrega field on the panel', async () => {
    const c: Cenario = await cenario(ctx);
    await criarVersao(ctx, c.tipo.id);
    const ativa = await assinar(ctx, c.tipo.id, 1, { maximo_de_tentativas: 3 });
    const desligada = await assinar(ctx, c.tipo.id);
    await patch(`/assinatura/${desligada.id}`, { ativa: false });
    const excluida = await assinar(ctx, c.tipo.id);
    expect((await ctx.api().delete(`/assinatura/${excluida.id}`).set(auth(ctx.todas))).status).toBe(204);
    await assinar(ctx, c.tipo.id, 2);

    const response = await publicar(ctx, c.tokenDoDono, c.corpo());
    expect(response.status).toBe(201);
    const evento = response.body;
    expect(evento).toMatchObject({
      quantidade_de_entregas: 1,
      entregas_na_fila: 1,
      entregas_concluidas: 0,
      entregas_na_fila_de_erro: 0,
    });
    expect(evento.entregas).toHaveLength(1);
    const lido = await ctx.api().get(`/evento/${evento.id}`).set(auth(ctx.leitor));
    expect(lido.body.entregas).toEqual([
      {
        id: expect.stringMatching(UUIDV7),
        evento_id: evento.id,
        evento_recebido_em: evento.recebido_em,
        entidade_id: 'pedido-1',
        assinatura_id: ativa.id,
        aplicativo_assinante_id: ativa.aplicativo_assinante_id,
        aplicativo_assinante_nome: 'Assinante',
        tipo_de_evento_nome: c.tipo.nome,
        versao_do_esquema: 1,
        url_de_destino: ativa.url_de_destino,
        situacao: 'pendente',
        quantidade_de_tentativas: 0,
        tentativas_no_ciclo_atual: 0,
        maximo_de_tentativas: 3,
        proxima_tentativa_em: evento.recebido_em,
        entregue_em: null,
        ultimo_erro: null,
        criada_em: evento.recebido_em,
        atualizada_em: evento.recebido_em,
        sequencia: null,
      },
    ]);
    // Published to hub.entregas with the work queue's key (the observer's binding), as the relay would.
    const [job] = await trabalhosDe([evento.entregas[0].id]);
    expect(job).toMatchObject({ entrega_id: evento.entregas[0].id, evento_id: evento.id, assinatura_id: ativa.id });
    expect(await ctx.hub.db.outbox.count({ where: { messageId: evento.entregas[0].id } })).toBe(0);
    const corpo = JSON.parse(job!.corpo);
    expect(corpo).toEqual({
      id: evento.id,
      tipo: c.tipo.nome,
      versao_do_esquema: 1,
      entidade_id: 'pedido-1',
      ocorrido_em: evento.ocorrido_em,
      recebido_em: evento.recebido_em,
      aplicativo_publicador_id: c.dono.id,
      assinatura_id: ativa.id,
      dados: { numero: 'A-1', valor: 10 },
    });
    expect(corpo).not.toHaveProperty('teste');
    const hora = new Date(Math.floor(Date.parse(evento.recebido_em) / 3_600_000) * 3_600_000);
    const tally = await ctx.hub.db.resumoPorHora.aggregate({ where: { hora }, _sum: { eventos: true } });
    expect(tally._sum.eventos).toBeGreaterThanOrEqual(1);
  });
});

describe('POST /evento and GET /evento/{id}: the panel', () => {
  test('When the panel publishes, then the owner of the type is the publisher and publicado_pelo_email is the caller', async () => {
    const c = await cenario(ctx);
    const response = await ctx.api().post('/evento').set(auth(ctx.todas)).send(c.corpo());
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      aplicativo_publicador_id: c.dono.id,
      publicado_pelo_email: emailDoToken(ctx.todas),
    });
    const lido = await ctx.api().get(`/evento/${response.body.id}`).set(auth(ctx.leitor));
    expect(lido.status).toBe(200);
    expect(lido.body).toEqual(response.body);
  });

  test('When the panel publishes a test event, then each delivery body says "teste": true and names its own subscription; an application\'s never says teste', async () => {
    const c = await cenario(ctx);
    const [a, b] = [await assinar(ctx, c.tipo.id), await assinar(ctx, c.tipo.id)];
    /** The bodies publication wrote, after checking that a rebuilt job (a new cycle, the sweeper) has the same. */
    const corposDoEvento = async (id: string) => {
      const entregas = await ctx.hub.db.entrega.findMany({ where: { eventoId: id } });
      const jobs = await trabalhosDe(entregas.map((e) => e.id));
      const refeitos = await trabalhosDasEntregas(
        ctx.hub.db,
        entregas.map((e) => e.id),
      );
      for (const j of jobs) expect(refeitos.get(j.entrega_id)?.corpo).toBe(j.corpo);
      return jobs.map((j) => JSON.parse(j.corpo) as Record<string, unknown>);
    };
    const teste = await ctx.api().post('/evento').set(auth(ctx.todas)).send(c.corpo());
    expect(teste.status).toBe(201);
    const corpos = await corposDoEvento(teste.body.id);
    expect(corpos.map((x) => x.assinatura_id).sort()).toEqual([a!.id, b!.id].sort());
    for (const corpo of corpos) expect(corpo).toMatchObject({ id: teste.body.id, teste: true });

    const doAplicativo = await publicar(ctx, c.tokenDoDono, c.corpo());
    expect(doAplicativo.status).toBe(201);
    for (const corpo of await corposDoEvento(doAplicativo.body.id)) expect(corpo).not.toHaveProperty('teste');
  });

  test('When a reader (no monitoramento.criar) publishes, then 403, stored as refused with the e-mail', async () => {
    const c = await cenario(ctx);
    const response = await ctx.api().post('/evento').set(auth(ctx.leitor)).send(c.corpo());
    expect(response.status).toBe(403);
    const recusas = await ctx.hub.db.eventoRecusado.findMany({
      where: { publicadoPeloEmail: emailDoToken(ctx.leitor) },
    });
    expect(recusas.some((r) => r.tipoDeEventoId === c.tipo.id && r.statusHttp === 403)).toBe(true);
  });

  test('When no token is sent, then 401 and nothing is stored as refused', async () => {
    const antes = await ctx.hub.db.eventoRecusado.count();
    expect((await ctx.api().post('/evento').send({})).status).toBe(401);
    expect((await ctx.api().post('/eventos').send({})).status).toBe(401);
    expect(await ctx.hub.db.eventoRecusado.count()).toBe(antes);
  });

  test('When the event does not exist, then GET /evento/{id} is 404', async () => {
    expect((await ctx.api().get(`/evento/${MISSING}`).set(auth(ctx.leitor))).status).toBe(404);
  });
});

describe('ownership', () => {
  test('When an application publishes a type it does not own, then 403 tipo_de_outro_aplicativo, stored as refused', async () => {
    const c = await cenario(ctx);
    const outro = await criarAplicativo(ctx, 'Outro');
    const token = await ctx.identity.appToken(outro.client_id as string);
    const response = await publicar(ctx, token, c.corpo());
    expect(response.status).toBe(403);
    expect(response.body.codigo).toBe('tipo_de_outro_aplicativo');
    const [recusa] = await ctx.hub.db.eventoRecusado.findMany({ where: { aplicativoId: outro.id } });
    expect(recusa).toMatchObject({
      codigo: 'tipo_de_outro_aplicativo',
      clientId: outro.client_id,
      tipoDeEventoId: c.tipo.id,
    });
  });

  test('When the application is not registered or is switched off, then 403', async () => {
    const c = await cenario(ctx);
    const estranho = await publicar(ctx, await ctx.identity.appToken('nao_registrado_x'), c.corpo());
    expect(estranho.status).toBe(403);
    expect(estranho.body.codigo).toBe('aplicativo_nao_registrado');
    await patch(`/aplicativo/${c.dono.id}`, { ativo: false });
    const inativo = await publicar(ctx, c.tokenDoDono, c.corpo());
    expect(inativo.status).toBe(403);
    expect(inativo.body.codigo).toBe('aplicativo_inativo');
  });

  test("When an application reads another application's event, then 404; its own, 200", async () => {
    const c = await cenario(ctx);
    const publicado = await publicar(ctx, c.tokenDoDono, c.corpo());
    const outro = await criarAplicativo(ctx, 'Outro');
    const token = await ctx.identity.appToken(outro.client_id as string);
    expect((await ctx.api().get(`/eventos/${publicado.body.id}`).set(auth(token))).status).toBe(404);
    const proprio = await ctx.api().get(`/eventos/${publicado.body.id}`).set(auth(c.tokenDoDono));
    expect(proprio.status).toBe(200);
    expect(proprio.body).toEqual(publicado.body);
  });
});

describe('refused bodies', () => {
  test('When the body breaks the shape, then 422 and the refusal keeps the body, the sender and one more recusados in the hour', async () => {
    const c = await cenario(ctx);
    const hora = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const soma = async () =>
      (await ctx.hub.db.resumoPorHora.aggregate({ where: { hora: { gte: hora } }, _sum: { recusados: true } }))._sum
        .recusados ?? 0;
    const antes = await soma();
    const response = await publicar(ctx, c.tokenDoDono, { ...c.corpo(), extra: 1, dados: undefined });
    expect(response.status).toBe(422);
    const [recusa] = await ctx.hub.db.eventoRecusado.findMany({ where: { aplicativoId: c.dono.id } });
    expect(recusa).toMatchObject({
      codigo: 'dados_invalidos',
      statusHttp: 422,
      corpoTruncado: false,
      clientId: c.dono.client_id,
    });
    expect((recusa!.erros as unknown[]).length).toBeGreaterThan(0);
    expect(await soma()).toBeGreaterThanOrEqual(antes + 1);
  });

  test('When a refused body is larger than 64 KiB, then it is kept truncated with corpo_truncado', async () => {
    const c = await cenario(ctx);
    const response = await publicar(
      ctx,
      c.tokenDoDono,
      c.corpo({ dados: { numero: 'é'.repeat(40_000) }, extra: true }),
    );
    expect(response.status).toBe(422);
    const [recusa] = await ctx.hub.db.eventoRecusado.findMany({ where: { aplicativoId: c.dono.id } });
    expect(recusa!.corpoTruncado).toBe(true);
    expect(Buffer.byteLength(recusa!.corpo!, 'utf8')).toBeLessThanOrEqual(64 * 1024);
    expect(recusa!.corpo!.endsWith('é')).toBe(true);
  });
});

describe('a refusal that cannot be stored', () => {
  test('When storing the refusal fails, then the client still gets its 4xx', async () => {
    const c = await cenario(ctx);
    await ctx.hub.db.$executeRawUnsafe('alter table evento_recusado rename to evento_recusado_fora');
    try {
      const response = await publicar(ctx, c.tokenDoDono, c.corpo({ versao_do_esquema: 9 }));
      expect(response.status).toBe(422);
      expect(response.body.codigo).toBe('versao_inexistente');
    } finally {
      await ctx.hub.db.$executeRawUnsafe('alter table evento_recusado_fora rename to evento_recusado');
    }
  });
});

describe('cached lookups of publication', () => {
  test('When a subscription is switched off or an application after a publication, then the next publication sees it at once', async () => {
    const c = await cenario(ctx);
    const assinatura = await assinar(ctx, c.tipo.id);
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).body.entregas).toHaveLength(1);
    await patch(`/assinatura/${assinatura.id}`, { ativa: false });
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).body.entregas).toHaveLength(0);
    await patch(`/aplicativo/${c.dono.id}`, { ativo: false });
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).status).toBe(403);
  });

  test('When a type or its version is switched off, on again, or an application renamed after a publication, then the next publication sees it at once', async () => {
    const c = await cenario(ctx);
    const assinatura = await assinar(ctx, c.tipo.id);
    const versao = (
      await ctx.api().get('/versao-de-esquema/filtro').query({ tipo_de_evento_id: c.tipo.id }).set(auth(ctx.todas))
    ).body[0];
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).status).toBe(201);
    await patch(`/tipo-de-evento/${c.tipo.id}`, { ativo: false });
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).body.codigo).toBe('tipo_de_evento_inativo');
    await patch(`/tipo-de-evento/${c.tipo.id}`, { ativo: true });
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).status).toBe(201);
    await patch(`/versao-de-esquema/${versao.id}`, { ativa: false });
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).body.codigo).toBe('versao_desativada');
    await patch(`/versao-de-esquema/${versao.id}`, { ativa: true });
    expect((await publicar(ctx, c.tokenDoDono, c.corpo())).status).toBe(201);
    await patch(`/aplicativo/${c.dono.id}`, { nome: 'Publicador renomeado' });
    await patch(`/aplicativo/${assinatura.aplicativo_assinante_id}`, { nome: 'Assinante renomeado' });
    const depois = await publicar(ctx, c.tokenDoDono, c.corpo());
    expect(depois.body.aplicativo_publicador_nome).toBe('Publicador renomeado');
    const lido = await ctx.api().get(`/evento/${depois.body.id}`).set(auth(ctx.leitor));
    expect(lido.body.entregas[0].aplicativo_assinante_nome).toBe('Assinante renomeado');
  });
});
