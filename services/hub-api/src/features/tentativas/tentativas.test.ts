import { uuidv7 } from '@hub/database';
import { auth, type Contexto, encerrarContexto, expectPagina, iniciarContexto } from '../../contexto.test-support';
import { type Cenario, criarCenario, gravarEvento } from '../eventos/linhas.test-support';

let ctx: Contexto;
let a: Cenario;
let b: Cenario;
beforeAll(async () => {
  ctx = await iniciarContexto();
  a = await criarCenario(ctx);
  b = await criarCenario(ctx);
});
afterAll(() => encerrarContexto(ctx));

const ler = () => auth(ctx.leitor);
const em = (segundo: number) => new Date(Date.UTC(2097, 2, 1, 10, 0, segundo));
const ids = (itens: { id: string }[]) => itens.map((item) => item.id);

/** An attempt as the delivery worker records it. */
async function gravar(entregaId: string, numero: number, statusHttp: number | null, segundo: number) {
  const id = uuidv7();
  const { assinaturaId } = await ctx.hub.db.entrega.findUniqueOrThrow({
    where: { id: entregaId },
    select: { assinaturaId: true },
  });
  await ctx.hub.db.tentativa.create({
    data: {
      id,
      entregaId,
      assinaturaId,
      numero,
      iniciadaEm: em(segundo),
      duracaoMs: 40 + numero,
      statusHttp,
      sucesso: statusHttp !== null && statusHttp >= 200 && statusHttp < 300,
      resposta: statusHttp === null ? null : `{"status":${statusHttp}}`,
      erro: statusHttp === null ? 'timeout after 10000 ms' : statusHttp >= 300 ? `HTTP ${statusHttp}` : null,
      cabecalhos: {
        'webhook-id': entregaId,
        'webhook-timestamp': '4013654400',
        'webhook-signature': 'v1a,c2lnbmF0dXJl',
        'webhook-key-id': 'kid-1',
        'content-type': 'application/json',
      },
    },
  });
  return id;
}

async function filtro(query: Record<string, string>) {
  const response = await ctx.api().get('/tentativa/filtro').query(query).set(ler());
  expect(response.status).toBe(200);
  return ids(response.body);
}

describe('/tentativa', () => {
  let deA: string;
  let deB: string;
  const t: Record<string, string> = {};
  beforeAll(async () => {
    [deA] = (await gravarEvento(ctx.hub.db, a, { recebidoEm: em(0), entregas: ['fila_de_erro'] })).entregas as [string];
    [deB] = (await gravarEvento(ctx.hub.db, b, { recebidoEm: em(0), entregas: ['concluida'] })).entregas as [string];
    t.a1 = await gravar(deA, 1, 500, 1);
    t.a2 = await gravar(deA, 2, null, 2);
    t.a3 = await gravar(deA, 3, 503, 3);
    t.b1 = await gravar(deB, 1, 500, 4);
    t.b2 = await gravar(deB, 2, 200, 5);
  });

  test('When no token is sent, then the three routes answer 401; without monitoramento, 403', async () => {
    for (const path of ['/tentativa', '/tentativa/filtro', `/tentativa/${t.a1}`]) {
      expect({ path, status: (await ctx.api().get(path)).status }).toEqual({ path, status: 401 });
      const semPermissao = await ctx.api().get(path).set(auth(ctx.semMonitoramento));
      expect({ path, status: semPermissao.status }).toEqual({ path, status: 403 });
    }
  });

  test('When an attempt is read by id, then every field comes back, the headers sent included', async () => {
    const response = await ctx.api().get(`/tentativa/${t.a2}`).set(ler());
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: t.a2,
      entrega_id: deA,
      numero: 2,
      iniciada_em: '2097-03-01T10:00:02.000Z',
      duracao_ms: 42,
      status_http: null,
      sucesso: false,
      resposta: null,
      erro: 'timeout after 10000 ms',
      cabecalhos: {
        'webhook-id': deA,
        'webhook-timestamp': '4013654400',
        'webhook-signature': 'v1a,c2lnbmF0dXJl',
        'webhook-key-id': 'kid-1',
        'content-type': 'application/json',
      },
    });
  });

  test('When an unknown id or a word that is no id is asked, then 404', async () => {
    for (const id of [uuidv7(), 'nao-e-uuid'])
      expect({ id, status: (await ctx.api().get(`/tentativa/${id}`).set(ler())).status }).toEqual({ id, status: 404 });
  });

  test('When every filter is used alone, then only matching attempts come, newest first', async () => {
    expect(await filtro({ entrega_id: deA })).toEqual([t.a3, t.a2, t.a1]);
    expect(await filtro({ assinatura_id: b.assinaturaId })).toEqual([t.b2, t.b1]);
    expect(await filtro({ sucesso: 'true' })).toEqual([t.b2]);
    expect((await filtro({ sucesso: 'false' })).slice(0, 4)).toEqual([t.b1, t.a3, t.a2, t.a1]);
    expect(await filtro({ status_http: '500' })).toEqual([t.b1, t.a1]);
    expect(await filtro({ desde: em(4).toISOString(), entrega_id: deB })).toEqual([t.b2, t.b1]);
    expect(await filtro({ ate: em(2).toISOString(), assinatura_id: a.assinaturaId })).toEqual([t.a2, t.a1]);
  });

  test('When filters are combined, then every one holds (desde and ate inclusive)', async () => {
    expect(
      await filtro({
        assinatura_id: a.assinaturaId,
        sucesso: 'false',
        desde: em(2).toISOString(),
        ate: em(3).toISOString(),
      }),
    ).toEqual([t.a3, t.a2]);
    expect(await filtro({ entrega_id: deA, status_http: '200' })).toEqual([]);
  });

  test('When a filter is malformed, then 400 names it', async () => {
    for (const query of [
      { status_http: '99' },
      { status_http: '2000' },
      { sucesso: 'sim' },
      { entrega_id: 'x' },
      { desde: 'ontem' },
    ]) {
      const response = await ctx.api().get('/tentativa/filtro').query(query).set(ler());
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
    }
  });

  test('When the list is paged with filters, then the page, its size and the filtered total agree', async () => {
    const response = await ctx
      .api()
      .get('/tentativa')
      .query({ assinatura_id: a.assinaturaId, pagina: 2, tamanho: 2 })
      .set(ler());
    expect(response.status).toBe(200);
    expectPagina(response.body, 2, 2);
    expect(response.body.total).toBe(3);
    expect(ids(response.body.itens as { id: string }[])).toEqual([t.a1!]);
    const clamped = await ctx.api().get('/tentativa').query({ pagina: 0, tamanho: 0, entrega_id: deB }).set(ler());
    expectPagina(clamped.body, 1, 1);
    expect(clamped.body.total).toBe(2);
    expect(ids(clamped.body.itens as { id: string }[])).toEqual([t.b2!]);
  });
});
