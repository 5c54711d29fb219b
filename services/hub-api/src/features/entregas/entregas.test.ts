import { uuidv7 } from '@hub/database';
import { waitFor } from '@hub/testing';
import { auth, criarAplicativo, expectPagina, ISO_MS } from '../../contexto.test-support';
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

let ctx: ContextoComFila;
let cenario: Cenario & { tipoNome: string };
let publicados: Awaited<ReturnType<typeof observarTrabalhos>>;
beforeAll(async () => {
  ctx = await iniciarContextoComFila();
  cenario = await criarCenario(ctx);
  publicados = await observarTrabalhos(ctx.hub);
}, 60_000);
afterAll(() => ctx?.encerrar());

const ler = () => auth(ctx.leitor);
const editar = () => auth(ctx.todas);
const ids = (itens: { id: string }[]) => itens.map((item) => item.id);

/** An event published through POST /evento (the real publication path): its deliveries, their jobs published. */
async function publicar(c: Cenario = cenario, dadosTexto = '{"numero":"7","valor":12345678901234567890}') {
  const response = await ctx
    .api()
    .post('/evento')
    .set({ ...editar(), 'content-type': 'application/json' })
    .send(`{"tipo_de_evento_id":"${c.tipoId}","versao_do_esquema":1,"entidade_id":"pedido-7","dados":${dadosTexto}}`);
  if (response.status !== 201) throw new Error(`POST /evento answered ${response.status}: ${response.text}`);
  return response.body as { id: string; entregas: { id: string }[] };
}

describe('who may use /entrega', () => {
  test('When no token is sent, then 401; without monitoramento, 403; reading needs ler, resending needs editar', async () => {
    const id = uuidv7();
    for (const path of ['/entrega', '/entrega/filtro', `/entrega/${id}`]) {
      expect({ path, status: (await ctx.api().get(path)).status }).toEqual({ path, status: 401 });
      const sem = await ctx.api().get(path).set(auth(ctx.semMonitoramento));
      expect({ path, status: sem.status, codigo: sem.body.codigo }).toEqual({
        path,
        status: 403,
        codigo: 'sem_permissao',
      });
    }
    expect((await ctx.api().get('/entrega').set(ler())).status).toBe(200);
    const leitor = await ctx.api().post(`/entrega/${id}/reenviar`).set(ler());
    expect({ status: leitor.status, codigo: leitor.body.codigo }).toEqual({ status: 403, codigo: 'sem_permissao' });
  });
});

describe('GET /entrega and GET /entrega/filtro', () => {
  let outro: Cenario & { tipoNome: string };
  let antigo: { id: string; entregas: string[] };
  let novo: { id: string; entregas: string[] };
  let doOutro: { id: string; entregas: string[] };
  beforeAll(async () => {
    outro = await criarCenario(ctx);
    antigo = await gravarEvento(ctx.hub.db, cenario, {
      recebidoEm: new Date('2020-01-01T00:00:01.000Z'),
      entregas: ['concluida', 'fila_de_erro'],
    });
    novo = await gravarEvento(ctx.hub.db, cenario, {
      recebidoEm: new Date('2020-01-01T00:00:02.000Z'),
      entregas: ['fila_de_erro', 'pendente'],
    });
    doOutro = await gravarEvento(ctx.hub.db, outro, {
      recebidoEm: new Date('2020-01-01T00:00:03.000Z'),
      entregas: ['fila_de_erro'],
    });
  });

  test('When deliveries are listed, then the newest come first with every field of Entrega', async () => {
    const response = await ctx.api().get('/entrega?tamanho=3').set(ler());
    expect(response.status).toBe(200);
    expectPagina(response.body, 1, 3);
    expect(ids(response.body.itens as { id: string }[])).toEqual([
      doOutro.entregas[0],
      novo.entregas[1],
      novo.entregas[0],
    ]);
    expect(response.body.total).toBe(await ctx.hub.db.entrega.count());
    expect(response.body.itens[0]).toEqual({
      id: doOutro.entregas[0],
      evento_id: doOutro.id,
      evento_recebido_em: '2020-01-01T00:00:03.000Z',
      entidade_id: 'pedido-1',
      assinatura_id: outro.assinaturaId,
      aplicativo_assinante_id: outro.assinanteId,
      aplicativo_assinante_nome: 'Assinante',
      tipo_de_evento_nome: outro.tipoNome,
      versao_do_esquema: 1,
      url_de_destino: 'https://recebedor.example/webhook',
      situacao: 'fila_de_erro',
      quantidade_de_tentativas: 0,
      tentativas_no_ciclo_atual: 0,
      maximo_de_tentativas: 8,
      proxima_tentativa_em: '2020-01-01T00:00:03.000Z',
      entregue_em: null,
      ultimo_erro: null,
      criada_em: '2020-01-01T00:00:03.000Z',
      atualizada_em: '2020-01-01T00:00:03.000Z',
      sequencia: null,
    });
  });

  test('When each filter is given alone and combined, then only the matching deliveries come, in both routes, with the page total of the filter', async () => {
    const casos: [string, string[]][] = [
      ['situacao=fila_de_erro', [doOutro.entregas[0]!, novo.entregas[0]!, antigo.entregas[1]!]],
      [`assinatura_id=${outro.assinaturaId}`, [doOutro.entregas[0]!]],
      [`evento_id=${antigo.id}`, [antigo.entregas[1]!, antigo.entregas[0]!].sort().reverse()],
      [`aplicativo_assinante_id=${outro.assinanteId}`, [doOutro.entregas[0]!]],
      [`tipo_de_evento_id=${cenario.tipoId}&situacao=fila_de_erro`, [novo.entregas[0]!, antigo.entregas[1]!]],
      [`tipo_de_evento_id=${outro.tipoId}&situacao=concluida`, []],
      [`situacao=pendente&evento_id=${novo.id}&assinatura_id=${cenario.assinaturaId}`, [novo.entregas[1]!]],
      ['desde=2020-01-01T00:00:02.000Z&ate=2020-01-01T00:00:02.000Z', [novo.entregas[1]!, novo.entregas[0]!]],
    ];
    for (const [query, esperadas] of casos) {
      const filtro = await ctx.api().get(`/entrega/filtro?${query}`).set(ler());
      expect({ query, status: filtro.status, ids: ids(filtro.body) }).toEqual({ query, status: 200, ids: esperadas });
      const pagina = await ctx.api().get(`/entrega?${query}&tamanho=500`).set(ler());
      expect({ query, ids: ids(pagina.body.itens), total: pagina.body.total }).toEqual({
        query,
        ids: esperadas,
        total: esperadas.length,
      });
    }
  });

  test('When a query is malformed, then 400 consulta_invalida', async () => {
    for (const query of ['pagina=1.5', 'tamanho=abc', 'situacao=perdida', 'assinatura_id=123', 'desde=ontem']) {
      const response = await ctx.api().get(`/entrega?${query}`).set(ler());
      expect({ query, status: response.status, codigo: response.body.codigo }).toEqual({
        query,
        status: 400,
        codigo: 'consulta_invalida',
      });
    }
    expect((await ctx.api().get('/entrega/filtro?evento_id=x').set(ler())).status).toBe(400);
  });

  test('When more than 200 deliveries match, then /entrega/filtro answers the newest 200, and tamanho above 500 is 500', async () => {
    const muitos = await gravarEvento(ctx.hub.db, cenario, {
      recebidoEm: new Date('2019-01-01T00:00:00.000Z'),
      entregas: Array.from({ length: 201 }, () => 'cancelada' as const),
    });
    const filtro = await ctx.api().get(`/entrega/filtro?evento_id=${muitos.id}`).set(ler());
    expect(filtro.body).toHaveLength(200);
    expect(filtro.body[0].id).toBe(muitos.entregas[200]);
    const pagina = await ctx.api().get('/entrega?tamanho=999').set(ler());
    expect(pagina.body.tamanho).toBe(500);
  });
});

describe('GET /entrega/{id}', () => {
  test('When a delivery is read, then it has every field and its attempts oldest first', async () => {
    const evento = await gravarEvento(ctx.hub.db, cenario, {
      recebidoEm: new Date('2018-01-01T00:00:00.000Z'),
      entregas: ['aguardando_nova_tentativa'],
    });
    const id = evento.entregas[0]!;
    await gravarTentativa(ctx.hub.db, id, 2, null);
    await gravarTentativa(ctx.hub.db, id, 1, 503);
    const response = await ctx.api().get(`/entrega/${id.toUpperCase()}`).set(ler());
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id, evento_id: evento.id, situacao: 'aguardando_nova_tentativa' });
    expect(response.body.tentativas.map((t: { numero: number }) => t.numero)).toEqual([1, 2]);
    expect(response.body.tentativas[0]).toEqual({
      id: expect.any(String),
      entrega_id: id,
      numero: 1,
      iniciada_em: expect.stringMatching(ISO_MS),
      duracao_ms: 12,
      status_http: 503,
      sucesso: false,
      resposta: null,
      erro: null,
      cabecalhos: {},
    });
    expect(response.body.tentativas[1]).toMatchObject({ status_http: null, sucesso: false });
  });

  test('When the delivery does not exist or the id is not a uuid, then 404', async () => {
    for (const id of [uuidv7(), 'nada']) {
      const response = await ctx.api().get(`/entrega/${id}`).set(ler());
      expect({ id, status: response.status }).toEqual({ id, status: 404 });
    }
  });
});

describe('POST /entrega/{id}/reenviar', () => {
  test('When a delivery in fila_de_erro is resent, then a new cycle starts with the same job as publication wrote, and its message leaves the error queue', async () => {
    const evento = await publicar();
    const id = evento.entregas[0]!.id;
    // The job publication sent once the event was committed (not through the outbox: despacho.ts).
    const [original] = (await publicados.trabalhos([id])).get(id)!;
    await porNaFilaDeErro(ctx.hub, [id], 3);
    expect(await idsNaFila(ctx.hub)).toContain(id);

    const antes = Date.now();
    const response = await ctx.api().post(`/entrega/${id}/reenviar`).set(editar());
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      id,
      situacao: 'pendente',
      tentativas_no_ciclo_atual: 0,
      quantidade_de_tentativas: 3,
      ultimo_erro: 'HTTP 500',
      tentativas: [],
    });
    expect(Date.parse(response.body.proxima_tentativa_em)).toBeGreaterThanOrEqual(antes - 1);
    const jobs = await ctx.hub.db.$queryRaw<{ body: string }[]>`
      select body::text from outbox where message_id = ${id} order by criado_em, id`;
    expect(jobs).toHaveLength(1);
    // The same body, to the digit of the 20-digit integer, as the one publication queued.
    expect(JSON.parse(jobs[0]!.body).corpo).toBe(original!.corpo);
    expect(JSON.parse(jobs[0]!.body).corpo).toContain('"valor":12345678901234567890');

    await waitFor(async () => !(await idsNaFila(ctx.hub)).includes(id), {
      what: 'the message to leave the error queue',
    });
    const concordancia = await verificarConcordancia(ctx.hub);
    expect(concordancia).toMatchObject({ concordam: true, faltando: [], sobrando: [], duplicadas: [] });
  });

  test('When a concluded delivery is resent, then it is queued again (nothing was in the error queue)', async () => {
    const evento = await gravarEvento(ctx.hub.db, cenario, { recebidoEm: new Date(), entregas: ['concluida'] });
    const id = evento.entregas[0]!;
    const response = await ctx.api().post(`/entrega/${id}/reenviar`).set(editar());
    expect({ status: response.status, situacao: response.body.situacao }).toEqual({
      status: 202,
      situacao: 'pendente',
    });
    expect((await jobsNaOutbox(ctx.hub.db, [id])).get(id)).toBe(1);
  });

  test('When the delivery is still in the queue, then 409 entrega_em_andamento and nothing changes', async () => {
    const evento = await gravarEvento(ctx.hub.db, cenario, {
      recebidoEm: new Date('2017-01-01T00:00:00.000Z'),
      entregas: ['pendente', 'em_andamento', 'aguardando_nova_tentativa'],
    });
    for (const id of evento.entregas) {
      const antes = await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id } });
      const response = await ctx.api().post(`/entrega/${id}/reenviar`).set(editar());
      expect({ status: response.status, codigo: response.body.codigo }).toEqual({
        status: 409,
        codigo: 'entrega_em_andamento',
      });
      expect(await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id } })).toEqual(antes);
    }
    expect((await jobsNaOutbox(ctx.hub.db, evento.entregas)).size).toBe(0);
  });

  test('When the subscription is switched off, then 409 assinatura_inativa and the delivery stays in the error queue', async () => {
    const desligado = await criarCenario(ctx);
    const evento = await publicar(desligado, '{"numero":"1","valor":1}');
    const id = evento.entregas[0]!.id;
    await porNaFilaDeErro(ctx.hub, [id]);
    const patch = await ctx.api().patch(`/assinatura/${desligado.assinaturaId}`).set(editar()).send({ ativa: false });
    expect(patch.status).toBe(200);
    const response = await ctx.api().post(`/entrega/${id}/reenviar`).set(editar());
    expect({ status: response.status, codigo: response.body.codigo }).toEqual({
      status: 409,
      codigo: 'assinatura_inativa',
    });
    expect((await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id } })).situacao).toBe('fila_de_erro');
    expect(await idsNaFila(ctx.hub)).toContain(id);
  });

  test('When the delivery does not exist, then 404, and the error queue still agrees with the database', async () => {
    const response = await ctx.api().post(`/entrega/${uuidv7()}/reenviar`).set(editar());
    expect(response.status).toBe(404);
    await criarAplicativo(ctx, 'Qualquer');
    await ctx.hub.conciliacao.conciliar();
    expect(await verificarConcordancia(ctx.hub)).toMatchObject({ concordam: true });
  });
});

describe('DELETE /assinatura/{id} and its deliveries', () => {
  test('When a subscription is deleted, then its deliveries waiting or in fila_de_erro are cancelled, their messages leave the error queue, and the others stay as they were', async () => {
    const excluida = await criarCenario(ctx);
    const publicado = await publicar(excluida, '{"numero":"9","valor":9}');
    const naFila = publicado.entregas[0]!.id;
    await porNaFilaDeErro(ctx.hub, [naFila]);
    const gravado = await gravarEvento(ctx.hub.db, excluida, {
      recebidoEm: new Date(),
      entregas: ['pendente', 'aguardando_nova_tentativa', 'em_andamento', 'concluida'],
    });
    const [pendente, aguardando, emAndamento, concluida] = gravado.entregas as [string, string, string, string];
    // Another subscription's delivery in the error queue is not touched.
    const mantida = (await publicar(cenario, '{"numero":"8","valor":8}')).entregas[0]!.id;
    await porNaFilaDeErro(ctx.hub, [mantida]);
    expect(await idsNaFila(ctx.hub)).toEqual(expect.arrayContaining([naFila, mantida]));

    expect((await ctx.api().delete(`/assinatura/${excluida.assinaturaId}`).set(editar())).status).toBe(204);

    const situacao = async (id: string) => (await ctx.api().get(`/entrega/${id}`).set(ler())).body;
    for (const id of [naFila, pendente, aguardando])
      expect(await situacao(id)).toMatchObject({
        situacao: 'cancelada',
        ultimo_erro: 'the subscription was deleted: delivery cancelled',
      });
    expect((await situacao(emAndamento)).situacao).toBe('em_andamento');
    expect((await situacao(concluida)).situacao).toBe('concluida');
    expect((await situacao(mantida)).situacao).toBe('fila_de_erro');

    await waitFor(async () => !(await idsNaFila(ctx.hub)).includes(naFila), {
      what: 'the cancelled delivery’s message to leave the error queue',
    });
    expect(await idsNaFila(ctx.hub)).toContain(mantida);
    expect(await verificarConcordancia(ctx.hub)).toMatchObject({ concordam: true, faltando: [], sobrando: [] });

    // Nothing is left to resend it to.
    const reenvio = await ctx.api().post(`/entrega/${naFila}/reenviar`).set(editar());
    expect({ status: reenvio.status, codigo: reenvio.body.codigo }).toEqual({
      status: 409,
      codigo: 'assinatura_inativa',
    });
  });

  test('When a subscription with no deliveries is deleted, then 204 and a second DELETE is 404', async () => {
    const vazia = await criarCenario(ctx);
    expect((await ctx.api().delete(`/assinatura/${vazia.assinaturaId}`).set(editar())).status).toBe(204);
    expect((await ctx.api().delete(`/assinatura/${vazia.assinaturaId}`).set(editar())).status).toBe(404);
  });
});
