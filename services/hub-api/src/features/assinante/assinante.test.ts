import http from 'node:http';
import { uuidv7 } from '@hub/database';
import { waitFor } from '@hub/testing';
import { auth, expectPagina } from '../../contexto.test-support';
import { type Cenario, criarCenario, gravarEvento, gravarTentativa } from '../eventos/linhas.test-support';
import {
  type ContextoComFila,
  idsNaFila,
  iniciarContextoComFila,
  jobsNaOutbox,
  porNaFilaDeErro,
  verificarConcordancia,
} from '../fila/fila-de-erro.test-support';
import { observarTrabalhos } from '../publicacao/trabalhos.test-support';

// At most two requests of applications under way (HUB_CONSULTAS_DE_APLICATIVOS_EM_ANDAMENTO): the
// tests below send one at a time, the admission test holds two open.
let ctx: ContextoComFila;
let publicados: Awaited<ReturnType<typeof observarTrabalhos>>;
beforeAll(async () => {
  ctx = await iniciarContextoComFila({ HUB_CONSULTAS_DE_APLICATIVOS_EM_ANDAMENTO: '2' });
  publicados = await observarTrabalhos(ctx.hub);
}, 60_000);
afterAll(() => ctx?.encerrar());

const ids = (itens: unknown[]) => (itens as { id: string }[]).map((item) => item.id);
const painel = () => auth(ctx.todas);

/** The token of the subscribing application of a scenario (its client id read from the panel). */
async function tokenDoAssinante(c: Cenario): Promise<string> {
  const aplicativo = await ctx.api().get(`/aplicativo/${c.assinanteId}`).set(painel());
  return ctx.identity.appToken(aplicativo.body.client_id as string);
}

/** A second subscription of the scenario's subscriber, to another scenario's type. */
async function assinarTambem(c: Cenario, outro: Cenario): Promise<Cenario> {
  const response = await ctx.api().post('/assinatura').set(painel()).send({
    aplicativo_assinante_id: c.assinanteId,
    tipo_de_evento_id: outro.tipoId,
    versao_do_esquema: 1,
    url_de_destino: 'https://recebedor.example/outra',
  });
  if (response.status !== 201) throw new Error(`POST /assinatura answered ${response.status}: ${response.text}`);
  return { ...outro, assinaturaId: response.body.id, assinanteId: c.assinanteId };
}

/** An event published through POST /evento (the real publication path), its jobs sent. */
async function publicar(c: Cenario) {
  const response = await ctx
    .api()
    .post('/evento')
    .set(painel())
    .send({
      tipo_de_evento_id: c.tipoId,
      versao_do_esquema: 1,
      entidade_id: 'pedido-9',
      dados: { numero: '9', valor: 9 },
    });
  if (response.status !== 201) throw new Error(`POST /evento answered ${response.status}: ${response.text}`);
  return response.body as { id: string; entregas: { id: string }[] };
}

describe('who may use /entregas and /assinaturas', () => {
  let c: Cenario;
  let token: string;
  let entrega: string;
  beforeAll(async () => {
    c = await criarCenario(ctx);
    token = await tokenDoAssinante(c);
    entrega = (await gravarEvento(ctx.hub.db, c, { recebidoEm: new Date(), entregas: ['concluida'] })).entregas[0]!;
  });
  const rotas = () =>
    [
      ['get', '/entregas'],
      ['get', `/entregas/${entrega}`],
      ['post', `/entregas/${entrega}/reenviar`],
      ['get', '/assinaturas'],
    ] as const;

  test('When no token is sent, then 401; a panel user’s token, even with every permission, is 401 tipo_de_token_invalido and changes nothing', async () => {
    for (const [metodo, path] of rotas()) {
      expect({ path, status: (await ctx.api()[metodo](path)).status }).toEqual({ path, status: 401 });
      const usuario = await ctx.api()[metodo](path).set(painel());
      expect({ path, status: usuario.status, codigo: usuario.body.codigo }).toEqual({
        path,
        status: 401,
        codigo: 'tipo_de_token_invalido',
      });
    }
    expect((await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: entrega } })).situacao).toBe('concluida');
    expect((await jobsNaOutbox(ctx.hub.db, [entrega])).size).toBe(0);
  });

  test('When an application token reaches the panel’s routes, then 401 tipo_de_token_invalido, its own delivery included', async () => {
    for (const [metodo, path] of [
      ['get', '/entrega'],
      ['get', '/entrega/filtro'],
      ['get', `/entrega/${entrega}`],
      ['post', `/entrega/${entrega}/reenviar`],
      ['get', '/assinatura'],
      ['get', `/assinatura/${c.assinaturaId}`],
    ] as const) {
      const response = await ctx.api()[metodo](path).set(auth(token));
      expect({ path, status: response.status, codigo: response.body.codigo }).toEqual({
        path,
        status: 401,
        codigo: 'tipo_de_token_invalido',
      });
    }
    expect((await jobsNaOutbox(ctx.hub.db, [entrega])).size).toBe(0);
  });

  test('When the application is not registered, then 403 aplicativo_nao_registrado; switched off, 403 aplicativo_inativo', async () => {
    const estranho = await ctx.identity.appToken('app_que_o_hub_nao_conhece');
    for (const [metodo, path] of rotas()) {
      const response = await ctx.api()[metodo](path).set(auth(estranho));
      expect({ path, status: response.status, codigo: response.body.codigo }).toEqual({
        path,
        status: 403,
        codigo: 'aplicativo_nao_registrado',
      });
    }
    const desligado = await criarCenario(ctx);
    const tokenDesligado = await tokenDoAssinante(desligado);
    expect((await ctx.api().get('/entregas').set(auth(tokenDesligado))).status).toBe(200);
    const patch = await ctx.api().patch(`/aplicativo/${desligado.assinanteId}`).set(painel()).send({ ativo: false });
    expect(patch.status).toBe(200);
    for (const [metodo, path] of rotas()) {
      const response = await ctx.api()[metodo](path).set(auth(tokenDesligado));
      expect({ path, status: response.status, codigo: response.body.codigo }).toEqual({
        path,
        status: 403,
        codigo: 'aplicativo_inativo',
      });
    }
  });
});

describe('GET /entregas and GET /entregas/{id}', () => {
  let a1: Cenario;
  let a2: Cenario;
  let b: Cenario;
  let tokenA: string;
  let tokenB: string;
  let antigo: { id: string; entregas: string[] };
  let doB: { id: string; entregas: string[] };
  let novo: { id: string; entregas: string[] };
  beforeAll(async () => {
    a1 = await criarCenario(ctx);
    b = await criarCenario(ctx);
    // A subscribes to B's type too: two subscriptions of A, one event type shared with B.
    a2 = await assinarTambem(a1, b);
    [tokenA, tokenB] = await Promise.all([tokenDoAssinante(a1), tokenDoAssinante(b)]);
    antigo = await gravarEvento(ctx.hub.db, a1, {
      recebidoEm: new Date('2020-01-01T00:00:01.000Z'),
      entregas: ['concluida', 'fila_de_erro'],
    });
    doB = await gravarEvento(ctx.hub.db, b, {
      recebidoEm: new Date('2020-01-01T00:00:02.000Z'),
      entregas: ['fila_de_erro'],
    });
    novo = await gravarEvento(ctx.hub.db, a2, {
      recebidoEm: new Date('2020-01-01T00:00:03.000Z'),
      entregas: ['pendente', 'cancelada'],
    });
  });
  const deA = () => [novo.entregas[1]!, novo.entregas[0]!, antigo.entregas[1]!, antigo.entregas[0]!];

  test('When an application lists its deliveries, then only those of its own subscriptions come, newest first, each as the panel shows it', async () => {
    const response = await ctx.api().get('/entregas').set(auth(tokenA));
    expect(response.status).toBe(200);
    expectPagina(response.body, 1, 10);
    expect({ ids: ids(response.body.itens), total: response.body.total }).toEqual({
      ids: deA(),
      total: 4,
    });
    // The same representation as the panel's list (one mapper).
    const doPainel = await ctx.api().get(`/entrega?aplicativo_assinante_id=${a1.assinanteId}`).set(painel());
    expect(response.body.itens).toEqual(doPainel.body.itens);
    const deB = await ctx.api().get('/entregas').set(auth(tokenB));
    expect({ ids: ids(deB.body.itens), total: deB.body.total }).toEqual({ ids: doB.entregas, total: 1 });
  });

  test('When each filter is given alone and combined, then only the application’s matching deliveries come, with the total of the filter', async () => {
    const casos: [string, string[]][] = [
      ['situacao=fila_de_erro', [antigo.entregas[1]!]],
      ['situacao=concluida', [antigo.entregas[0]!]],
      ['situacao=pendente', [novo.entregas[0]!]],
      [`assinatura_id=${a1.assinaturaId}`, [antigo.entregas[1]!, antigo.entregas[0]!]],
      [`assinatura_id=${a2.assinaturaId}`, [novo.entregas[1]!, novo.entregas[0]!]],
      // B's type: B's delivery of it stays B's.
      [`tipo_de_evento_id=${b.tipoId}`, [novo.entregas[1]!, novo.entregas[0]!]],
      [`tipo_de_evento_id=${a1.tipoId}&situacao=concluida`, [antigo.entregas[0]!]],
      [`evento_id=${antigo.id}`, [antigo.entregas[1]!, antigo.entregas[0]!]],
      // B's event: nothing of A's, and nothing of B's.
      [`evento_id=${doB.id}`, []],
      ['desde=2020-01-01T00:00:02.000Z', [novo.entregas[1]!, novo.entregas[0]!]],
      ['ate=2020-01-01T00:00:02.000Z', [antigo.entregas[1]!, antigo.entregas[0]!]],
      ['desde=2020-01-01T00:00:03.000Z&ate=2020-01-01T00:00:03.000Z&situacao=cancelada', [novo.entregas[1]!]],
      // The panel's subscriber filter is not the application's to choose: its own deliveries still.
      [`aplicativo_assinante_id=${b.assinanteId}`, deA()],
    ];
    for (const [query, esperadas] of casos) {
      const response = await ctx.api().get(`/entregas?${query}`).set(auth(tokenA));
      expect({ query, status: response.status, ids: ids(response.body.itens), total: response.body.total }).toEqual({
        query,
        status: 200,
        ids: esperadas,
        total: esperadas.length,
      });
    }
  });

  test('When pages are asked, then they split the application’s deliveries in order; tamanho above 500 is 500', async () => {
    const paginas: string[] = [];
    for (const pagina of [1, 2, 3]) {
      const response = await ctx.api().get(`/entregas?pagina=${pagina}&tamanho=2`).set(auth(tokenA));
      expectPagina(response.body, pagina, 2);
      expect(response.body.total).toBe(4);
      paginas.push(...ids(response.body.itens));
    }
    expect(paginas).toEqual(deA());
    expect((await ctx.api().get('/entregas?tamanho=999').set(auth(tokenA))).body.tamanho).toBe(500);
  });

  test('When the subscription filter names another application’s subscription or none, then 404, as if it did not exist', async () => {
    for (const assinatura of [b.assinaturaId, uuidv7()]) {
      const response = await ctx.api().get(`/entregas?assinatura_id=${assinatura}`).set(auth(tokenA));
      expect({ status: response.status, codigo: response.body.codigo }).toEqual({
        status: 404,
        codigo: 'nao_encontrado',
      });
    }
  });

  test('When a query is malformed, then 400 consulta_invalida, as on the panel’s list', async () => {
    for (const query of [
      'pagina=1.5',
      'tamanho=abc',
      'situacao=perdida',
      'assinatura_id=123',
      'tipo_de_evento_id=x',
      'evento_id=%00',
      'desde=ontem',
      'ate=2020-13-01T00:00:00Z',
      'situacao=%FF',
      'situacao=pendente&situacao=concluida',
    ]) {
      const response = await ctx.api().get(`/entregas?${query}`).set(auth(tokenA));
      expect({ query, status: response.status, codigo: response.body.codigo }).toEqual({
        query,
        status: 400,
        codigo: 'consulta_invalida',
      });
    }
  });

  test('When an application reads its delivery, then it has its attempts, as the panel’s GET /entrega/{id} answers it', async () => {
    const id = antigo.entregas[1]!;
    await gravarTentativa(ctx.hub.db, id, 1, 500);
    const response = await ctx.api().get(`/entregas/${id.toUpperCase()}`).set(auth(tokenA));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id, assinatura_id: a1.assinaturaId, situacao: 'fila_de_erro' });
    expect(response.body.tentativas).toEqual([
      expect.objectContaining({ entrega_id: id, numero: 1, status_http: 500 }),
    ]);
    expect(response.body).toEqual((await ctx.api().get(`/entrega/${id}`).set(painel())).body);
  });

  test('When the delivery is another application’s, then 404 with the same body as one that does not exist', async () => {
    const deOutro = await ctx.api().get(`/entregas/${doB.entregas[0]}`).set(auth(tokenA));
    const inexistente = await ctx.api().get(`/entregas/${uuidv7()}`).set(auth(tokenA));
    expect({ status: deOutro.status, codigo: deOutro.body.codigo, detail: deOutro.body.detail }).toEqual({
      status: 404,
      codigo: inexistente.body.codigo,
      detail: inexistente.body.detail,
    });
    expect((await ctx.api().get(`/entregas/${doB.entregas[0]}`).set(auth(tokenB))).status).toBe(200);
  });

  test('When the id is not an id, then 404; NUL or percent-encoding that is not UTF-8, 400 caminho_invalido; never a 500', async () => {
    for (const [path, status, codigo] of [
      ['/entregas/nada', 404, 'nao_encontrado'],
      ['/entregas/%00', 400, 'caminho_invalido'],
      [`/entregas/${antigo.entregas[0]}%00`, 400, 'caminho_invalido'],
      ['/entregas/%FF', 400, 'caminho_invalido'],
      ['/entregas/%zz/reenviar', 400, 'caminho_invalido'],
      ['/entregas/nada/reenviar', 404, 'nao_encontrado'],
    ] as const) {
      const metodo = path.endsWith('/reenviar') ? 'post' : 'get';
      const response = await ctx.api()[metodo](path).set(auth(tokenA));
      expect({ path, status: response.status, codigo: response.body.codigo }).toEqual({ path, status, codigo });
    }
  });
});

describe('GET /assinaturas', () => {
  test('When an application lists its subscriptions, then only its own come, as the panel shows them, with its filters and pages', async () => {
    const a = await criarCenario(ctx);
    const b = await criarCenario(ctx);
    const a2 = await assinarTambem(a, b);
    const token = await tokenDoAssinante(a);
    const response = await ctx.api().get('/assinaturas').set(auth(token));
    expect(response.status).toBe(200);
    expectPagina(response.body, 1, 10);
    expect(ids(response.body.itens).sort()).toEqual([a.assinaturaId, a2.assinaturaId].sort());
    expect(response.body.total).toBe(2);
    const doPainel = await ctx.api().get(`/assinatura?aplicativo_assinante_id=${a.assinanteId}`).set(painel());
    // The same answer but for the operator's e-mail, which the application is not shown.
    const semEmail = (item: Record<string, unknown>) => ({ ...item, alterada_por: null });
    expect(doPainel.body.itens.map((item: Record<string, unknown>) => item.alterada_por_tipo)).toEqual([
      'operador',
      'operador',
    ]);
    expect(response.body).toEqual({ ...doPainel.body, itens: doPainel.body.itens.map(semEmail) });

    const casos: [string, string[]][] = [
      [`tipo_de_evento_id=${b.tipoId}`, [a2.assinaturaId]],
      ['versao_do_esquema=1&ativa=true', [a.assinaturaId, a2.assinaturaId].sort()],
      ['ativa=false', []],
      [`aplicativo_assinante_id=${b.assinanteId}`, [a.assinaturaId, a2.assinaturaId].sort()],
    ];
    for (const [query, esperadas] of casos) {
      const filtrada = await ctx.api().get(`/assinaturas?${query}`).set(auth(token));
      expect({ query, status: filtrada.status, ids: ids(filtrada.body.itens).sort() }).toEqual({
        query,
        status: 200,
        ids: esperadas,
      });
    }
    const primeira = await ctx.api().get('/assinaturas?tamanho=1').set(auth(token));
    const segunda = await ctx.api().get('/assinaturas?tamanho=1&pagina=2').set(auth(token));
    expect([...ids(primeira.body.itens), ...ids(segunda.body.itens)]).toEqual(ids(response.body.itens));
    expect(primeira.body.total).toBe(2);
    for (const query of ['ativa=sim', 'versao_do_esquema=x', 'tipo_de_evento_id=%00'])
      expect((await ctx.api().get(`/assinaturas?${query}`).set(auth(token))).status).toBe(400);

    // B's answer holds B's only.
    const deB = await ctx
      .api()
      .get('/assinaturas')
      .set(auth(await tokenDoAssinante(b)));
    expect(ids(deB.body.itens)).toEqual([b.assinaturaId]);
  });
});

describe('a deleted subscription', () => {
  test('When the application’s subscription is deleted, then GET /assinaturas leaves it out, and its deliveries are still the application’s to list and read', async () => {
    const c = await criarCenario(ctx);
    const token = await tokenDoAssinante(c);
    const evento = await gravarEvento(ctx.hub.db, c, {
      recebidoEm: new Date(),
      entregas: ['concluida', 'fila_de_erro'],
    });
    expect((await ctx.api().delete(`/assinatura/${c.assinaturaId}`).set(painel())).status).toBe(204);

    expect((await ctx.api().get('/assinaturas').set(auth(token))).body).toMatchObject({ itens: [], total: 0 });
    const lista = await ctx.api().get(`/entregas?assinatura_id=${c.assinaturaId}`).set(auth(token));
    expect({ status: lista.status, ids: ids(lista.body.itens).sort() }).toEqual({
      status: 200,
      ids: [...evento.entregas].sort(),
    });
    const naFila = await ctx.api().get(`/entregas/${evento.entregas[1]}`).set(auth(token));
    expect({ status: naFila.status, situacao: naFila.body.situacao }).toEqual({ status: 200, situacao: 'cancelada' });
    const reenvio = await ctx.api().post(`/entregas/${evento.entregas[0]}/reenviar`).set(auth(token));
    expect({ status: reenvio.status, codigo: reenvio.body.codigo }).toEqual({
      status: 409,
      codigo: 'assinatura_inativa',
    });
  });
});

describe('POST /entregas/{id}/reenviar', () => {
  test('When an application resends its delivery in fila_de_erro, then a new cycle starts as the panel’s resend starts it: attempts reset, its job sent to the worker again, its message gone from the error queue', async () => {
    const c = await criarCenario(ctx);
    const token = await tokenDoAssinante(c);
    const id = (await publicar(c)).entregas[0]!.id;
    const [original] = (await publicados.trabalhos([id])).get(id)!;
    await porNaFilaDeErro(ctx.hub, [id], 3);
    expect(await idsNaFila(ctx.hub)).toContain(id);

    const response = await ctx.api().post(`/entregas/${id}/reenviar`).set(auth(token));
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      id,
      situacao: 'pendente',
      tentativas_no_ciclo_atual: 0,
      quantidade_de_tentativas: 3,
      tentativas: [],
    });
    expect((await jobsNaOutbox(ctx.hub.db, [id])).get(id)).toBe(1);
    // The relay sends the new cycle's job to the work exchange: the same body publication sent.
    const copias = await waitFor(
      () => (publicados.recebidos.get(id)?.length === 2 ? publicados.recebidos.get(id) : undefined),
      {
        what: 'the resent job on the work exchange',
      },
    );
    expect(copias[1]!.corpo).toBe(original!.corpo);
    await waitFor(async () => !(await idsNaFila(ctx.hub)).includes(id), {
      what: 'the message to leave the error queue',
    });
    expect(await verificarConcordancia(ctx.hub)).toMatchObject({ concordam: true, faltando: [], sobrando: [] });
  });

  test('When another application resends it, then 404 and nothing changes; still in the queue, 409 entrega_em_andamento', async () => {
    const c = await criarCenario(ctx);
    const outro = await criarCenario(ctx);
    const evento = await gravarEvento(ctx.hub.db, c, {
      recebidoEm: new Date(),
      entregas: ['fila_de_erro', 'pendente'],
    });
    const [naFila, pendente] = evento.entregas as [string, string];
    const antes = await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: naFila } });

    const alheio = await ctx
      .api()
      .post(`/entregas/${naFila}/reenviar`)
      .set(auth(await tokenDoAssinante(outro)));
    expect({ status: alheio.status, codigo: alheio.body.codigo }).toEqual({ status: 404, codigo: 'nao_encontrado' });
    expect(await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: naFila } })).toEqual(antes);
    expect((await jobsNaOutbox(ctx.hub.db, [naFila])).size).toBe(0);

    const token = await tokenDoAssinante(c);
    const emAndamento = await ctx.api().post(`/entregas/${pendente}/reenviar`).set(auth(token));
    expect({ status: emAndamento.status, codigo: emAndamento.body.codigo }).toEqual({
      status: 409,
      codigo: 'entrega_em_andamento',
    });
    const proprio = await ctx.api().post(`/entregas/${naFila}/reenviar`).set(auth(token));
    expect({ status: proprio.status, situacao: proprio.body.situacao }).toEqual({ status: 202, situacao: 'pendente' });
    expect((await jobsNaOutbox(ctx.hub.db, [naFila, pendente])).get(naFila)).toBe(1);
    expect((await jobsNaOutbox(ctx.hub.db, [pendente])).size).toBe(0);
  });
});

/** A POST /entregas/{id}/reenviar whose body arrives only when `terminar` is called: under way until then. */
function reenvioLento(token: string, id: string) {
  const req = http.request(`${ctx.hub.url}/entregas/${id}/reenviar`, {
    method: 'POST',
    headers: { ...auth(token), 'content-type': 'application/json', 'content-length': 2 },
  });
  const resposta = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.write('{');
  const lento = {
    resposta,
    terminado: false,
    terminar: () => {
      lento.terminado = true;
      req.end('}');
    },
    abortar: () => req.destroy(),
  };
  return lento;
}

describe('admission', () => {
  test('When as many application requests as allowed are under way, then one more is 503 sobrecarregado with Retry-After; the panel is not limited; once they end, they are answered again', async () => {
    const c = await criarCenario(ctx);
    const token = await tokenDoAssinante(c);
    // The application known and its routes' pool connected first: a first read slower than the two
    // resends' admission would take one of the two places meanwhile, and one resend be refused.
    expect((await ctx.api().get('/entregas').set(auth(token))).status).toBe(200);
    const lentos = [reenvioLento(token, uuidv7()), reenvioLento(token, uuidv7())];
    try {
      const recusada = await waitFor(
        async () => {
          const r = await ctx.api().get('/entregas').set(auth(token));
          return r.status === 503 ? r : undefined;
        },
        { what: 'a request refused while two are under way' },
      );
      expect(recusada.headers['retry-after']).toBe('1');
      expect(recusada.body).toMatchObject({ status: 503, codigo: 'sobrecarregado' });
      expect((await ctx.api().get('/entrega').set(painel())).status).toBe(200);
      for (const lento of lentos) lento.terminar();
    } finally {
      for (const lento of lentos) if (!lento.terminado) lento.abortar();
    }
    expect(await Promise.all(lentos.map((l) => l.resposta))).toEqual([404, 404]);
    expect((await ctx.api().get('/entregas').set(auth(token))).status).toBe(200);
  });
});
