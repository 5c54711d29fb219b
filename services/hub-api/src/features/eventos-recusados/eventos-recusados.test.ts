import { uuidv7 } from '@hub/database';
import {
  auth,
  type Contexto,
  encerrarContexto,
  expectPagina,
  ISO_MS,
  iniciarContexto,
} from '../../contexto.test-support';
import { gravarRecusado } from '../eventos/linhas.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

const ler = () => auth(ctx.leitor);
const ids = (itens: { id: string }[]) => itens.map((item) => item.id);
const em = (minuto: number, segundo: number) => new Date(Date.UTC(2096, 4, 1, 12, minuto, segundo));

async function filtro(query: Record<string, string>) {
  const response = await ctx.api().get('/evento-recusado/filtro').query(query).set(ler());
  expect(response.status).toBe(200);
  return response.body as { id: string }[];
}

describe('who may read /evento-recusado', () => {
  test('When no token is sent, then the three routes answer 401; without monitoramento, 403', async () => {
    const id = await gravarRecusado(ctx.hub.db, { codigo: 'dados_invalidos', recebidoEm: em(0, 0) });
    for (const path of ['/evento-recusado', '/evento-recusado/filtro', `/evento-recusado/${id}`]) {
      expect({ path, status: (await ctx.api().get(path)).status }).toEqual({ path, status: 401 });
      expect({ path, status: (await ctx.api().get(path).set(auth(ctx.semMonitoramento))).status }).toEqual({
        path,
        status: 403,
      });
      expect({ path, status: (await ctx.api().get(path).set(ler())).status }).toEqual({ path, status: 200 });
    }
  });
});

describe('/evento-recusado', () => {
  test('When a refused publication is read by id, then every field comes back', async () => {
    const aplicativoId = uuidv7();
    const tipoDeEventoId = uuidv7();
    const id = await gravarRecusado(ctx.hub.db, {
      codigo: 'dados_invalidos',
      recebidoEm: em(1, 0),
      aplicativoId,
      tipoDeEventoId,
    });
    const response = await ctx.api().get(`/evento-recusado/${id}`).set(ler());
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id,
      codigo: 'dados_invalidos',
      status_http: 422,
      detalhe: 'dados break the schema of the version',
      erros: [{ caminho: '/dados/valor', mensagem: 'must be >= 0' }],
      corpo: '{"dados":{"valor":-1}}',
      corpo_truncado: false,
      tipo_de_evento_id: tipoDeEventoId,
      versao_do_esquema: 1,
      aplicativo_id: aplicativoId,
      client_id: 'app_cliente',
      publicado_pelo_email: null,
      recebido_em: '2096-05-01T12:01:00.000Z',
    });
    expect(response.body.recebido_em).toMatch(ISO_MS);
  });

  test('When the id is unknown or not a uuid, then 404', async () => {
    for (const id of [uuidv7(), 'nao-e-uuid']) {
      const response = await ctx.api().get(`/evento-recusado/${id}`).set(ler());
      expect({ id, status: response.status, codigo: response.body.codigo }).toEqual({
        id,
        status: 404,
        codigo: 'nao_encontrado',
      });
    }
  });

  test('When refused publications are listed, then the newest come first, a page at a time, with the clamps of every page', async () => {
    const antiga = await gravarRecusado(ctx.hub.db, {
      codigo: 'tipo_inativo',
      recebidoEm: new Date('2199-01-01T00:00:00Z'),
    });
    const nova = await gravarRecusado(ctx.hub.db, {
      codigo: 'tipo_inativo',
      recebidoEm: new Date('2199-01-01T00:00:01Z'),
    });
    const primeira = await ctx.api().get('/evento-recusado?tamanho=2').set(ler());
    expectPagina(primeira.body, 1, 2);
    expect(ids(primeira.body.itens as { id: string }[])).toEqual([nova, antiga]);
    expect(primeira.body.total).toBe(await ctx.hub.db.eventoRecusado.count());

    const padrao = await ctx.api().get('/evento-recusado').set(ler());
    expectPagina(padrao.body, 1, 10);
    const limitada = await ctx.api().get('/evento-recusado?pagina=-1&tamanho=0').set(ler());
    expectPagina(limitada.body, 1, 1);
    expect(ids(limitada.body.itens as { id: string }[])).toEqual([nova]);
    expectPagina((await ctx.api().get('/evento-recusado?tamanho=9999').set(ler())).body, 1, 500);
    expect((await ctx.api().get('/evento-recusado?pagina=um').set(ler())).status).toBe(400);
  });

  test('When each filter is given alone and combined, then exactly the matches come, newest first', async () => {
    const [app, outroApp, tipo] = [uuidv7(), uuidv7(), uuidv7()];
    const r1 = await gravarRecusado(ctx.hub.db, {
      codigo: 'dados_invalidos',
      recebidoEm: em(10, 0),
      aplicativoId: app,
    });
    const r2 = await gravarRecusado(ctx.hub.db, {
      codigo: 'versao_desligada',
      recebidoEm: em(10, 1),
      aplicativoId: app,
      tipoDeEventoId: tipo,
    });
    const r3 = await gravarRecusado(ctx.hub.db, {
      codigo: 'dados_invalidos',
      recebidoEm: em(10, 2),
      aplicativoId: outroApp,
      tipoDeEventoId: tipo,
    });
    expect(ids(await filtro({ aplicativo_id: app }))).toEqual([r2, r1]);
    expect(ids(await filtro({ tipo_de_evento_id: tipo }))).toEqual([r3, r2]);
    expect(ids(await filtro({ codigo: 'versao_desligada' }))).toEqual([r2]);
    const janela = { desde: '2096-05-01T12:10:01.000Z', ate: '2096-05-01T12:10:02.000Z' };
    expect(ids(await filtro(janela))).toEqual([r3, r2]);
    expect(ids(await filtro({ desde: janela.desde })).slice(-2)).toEqual([r3, r2]);
    expect(ids(await filtro({ ate: '2096-05-01T12:10:00.000Z' }))[0]).toBe(r1);
    expect(ids(await filtro({ codigo: 'dados_invalidos', tipo_de_evento_id: tipo }))).toEqual([r3]);
    expect(ids(await filtro({ aplicativo_id: app, ...janela }))).toEqual([r2]);
    expect(ids(await filtro({ aplicativo_id: outroApp, codigo: 'versao_desligada' }))).toEqual([]);
  });

  test('When more than 200 refused publications match, then the 200 newest come', async () => {
    const aplicativoId = uuidv7();
    const base = Date.UTC(2095, 0, 1);
    const linhas = Array.from({ length: 203 }, (_, i) => ({
      id: uuidv7(),
      codigo: 'dados_invalidos',
      statusHttp: 422,
      detalhe: 'x',
      aplicativoId,
      recebidoEm: new Date(base + i * 1000),
    }));
    await ctx.hub.db.eventoRecusado.createMany({ data: linhas });
    expect(ids(await filtro({ aplicativo_id: aplicativoId }))).toEqual(
      linhas
        .slice(3)
        .reverse()
        .map((l) => l.id),
    );
  });

  test.each([
    ['desde', '2096-05-01 12:00'],
    ['ate', 'amanha'],
    ['aplicativo_id', 'abc'],
    ['tipo_de_evento_id', '42'],
    ['codigo', 'Não É Código'],
  ])('When %s is malformed (%s), then 400 consulta_invalida', async (parametro, valor) => {
    const response = await ctx
      .api()
      .get('/evento-recusado/filtro')
      .query({ [parametro]: valor })
      .set(ler());
    expect({ status: response.status, codigo: response.body.codigo }).toEqual({
      status: 400,
      codigo: 'consulta_invalida',
    });
  });
});
