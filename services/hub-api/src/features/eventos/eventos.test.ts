import { uuidv7 } from '@hub/database';
import {
  auth,
  type Contexto,
  encerrarContexto,
  expectPagina,
  iniciarContexto,
  unico,
} from '../../contexto.test-support';
import { type Cenario, criarCenario, gravarEvento } from './linhas.test-support';

let ctx: Contexto;
let cenario: Cenario & { tipoNome: string };
beforeAll(async () => {
  ctx = await iniciarContexto();
  cenario = await criarCenario(ctx);
});
afterAll(() => encerrarContexto(ctx));

const ler = () => auth(ctx.leitor);
const ids = (itens: { id: string }[]) => itens.map((item) => item.id);

describe('who may read /evento', () => {
  test('When no token is sent, then 401; without monitoramento, 403; with monitoramento.ler, 200', async () => {
    for (const path of ['/evento', '/evento/filtro', '/evento/resumo']) {
      expect({ path, status: (await ctx.api().get(path)).status }).toEqual({ path, status: 401 });
      const semPermissao = await ctx.api().get(path).set(auth(ctx.semMonitoramento));
      expect({ path, status: semPermissao.status, codigo: semPermissao.body.codigo }).toEqual({
        path,
        status: 403,
        codigo: 'sem_permissao',
      });
      expect({ path, status: (await ctx.api().get(path).set(ler())).status }).toEqual({ path, status: 200 });
    }
  });
});

describe('GET /evento', () => {
  test('When events are listed, then the newest received come first (equal times by id, descending), each with its counters and without dados', async () => {
    const primeiro = await gravarEvento(ctx.hub.db, cenario, { recebidoEm: new Date('2099-01-01T00:00:01.000Z') });
    const empatadoA = await gravarEvento(ctx.hub.db, cenario, {
      recebidoEm: new Date('2099-01-01T00:00:02.000Z'),
      entidadeId: 'pedido-42',
      publicadoPeloEmail: 'monitor@empresa.com.br',
      entregas: ['concluida', 'pendente', 'em_andamento', 'aguardando_nova_tentativa', 'fila_de_erro', 'cancelada'],
    });
    const empatadoB = await gravarEvento(ctx.hub.db, cenario, { recebidoEm: new Date('2099-01-01T00:00:02.000Z') });

    const response = await ctx.api().get('/evento?tamanho=3').set(ler());
    expect(response.status).toBe(200);
    expectPagina(response.body, 1, 3);
    // uuidv7 ids made later are greater: B before A at the same time.
    expect(ids(response.body.itens as { id: string }[])).toEqual([empatadoB.id, empatadoA.id, primeiro.id]);
    expect(response.body.itens[1]).toEqual({
      id: empatadoA.id,
      tipo_de_evento_id: cenario.tipoId,
      tipo_de_evento_nome: cenario.tipoNome,
      versao_do_esquema: 1,
      aplicativo_publicador_id: cenario.aplicativoId,
      aplicativo_publicador_nome: 'Publicador',
      entidade_id: 'pedido-42',
      ocorrido_em: '2099-01-01T00:00:02.000Z',
      recebido_em: '2099-01-01T00:00:02.000Z',
      publicado_pelo_email: 'monitor@empresa.com.br',
      quantidade_de_entregas: 6,
      entregas_concluidas: 1,
      entregas_na_fila: 3,
      entregas_na_fila_de_erro: 1,
    });
    expect(response.body.itens[0]).toMatchObject({
      quantidade_de_entregas: 0,
      entregas_concluidas: 0,
      entregas_na_fila: 0,
      entregas_na_fila_de_erro: 0,
      publicado_pelo_email: null,
    });
    expect(response.body.itens.some((item) => 'dados' in item)).toBe(false);
  });

  test('When pagina and tamanho are absent, then they are 1 and 10, and total counts every stored event', async () => {
    for (let i = 0; i < 11; i++)
      await gravarEvento(ctx.hub.db, cenario, { recebidoEm: new Date(Date.UTC(2001, 0, 1, 0, 0, i)) });
    const response = await ctx.api().get('/evento').set(ler());
    expectPagina(response.body, 1, 10);
    expect(response.body.itens).toHaveLength(10);
    expect(response.body.total).toBe(await ctx.hub.db.evento.count());
  });

  test('When pagina or tamanho is below 1, then it is taken as 1', async () => {
    await gravarEvento(ctx.hub.db, cenario, { recebidoEm: new Date('2001-02-01T00:00:00.000Z') });
    const response = await ctx.api().get('/evento?pagina=0&tamanho=-5').set(ler());
    expect(response.status).toBe(200);
    expectPagina(response.body, 1, 1);
    expect(response.body.itens).toHaveLength(1);
  });

  test('When tamanho is above 500, then 500', async () => {
    const response = await ctx.api().get('/evento?tamanho=100000').set(ler());
    expect(response.status).toBe(200);
    expectPagina(response.body, 1, 500);
  });

  test.each(['1.5', 'dez', '', '1e3'])(
    'When pagina or tamanho is %j (not an integer), then 400 consulta_invalida',
    async (valor) => {
      for (const parametro of ['pagina', 'tamanho']) {
        const response = await ctx
          .api()
          .get('/evento')
          .query({ [parametro]: valor })
          .set(ler());
        expect({ parametro, status: response.status, codigo: response.body.codigo }).toEqual({
          parametro,
          status: 400,
          codigo: 'consulta_invalida',
        });
      }
    },
  );

  test('When a later page is asked, then it holds the events at that offset of the same order', async () => {
    for (let i = 0; i < 4; i++)
      await gravarEvento(ctx.hub.db, cenario, { recebidoEm: new Date(Date.UTC(2001, 3, 1, 0, 0, i)) });
    const quatro = await ctx.api().get('/evento?tamanho=4').set(ler());
    const segunda = await ctx.api().get('/evento?pagina=2&tamanho=2').set(ler());
    expectPagina(segunda.body, 2, 2);
    expect(ids(segunda.body.itens as { id: string }[])).toEqual(ids(quatro.body.itens.slice(2, 4)));
  });

  test('When pagina is past the last event, then itens is empty and total still counts every event', async () => {
    const response = await ctx.api().get('/evento?pagina=2147483647&tamanho=500').set(ler());
    expect(response.status).toBe(200);
    expectPagina(response.body, 2147483647, 500);
    expect(response.body.itens).toEqual([]);
    expect(response.body.total).toBe(await ctx.hub.db.evento.count());
  });
});

describe('GET /evento/filtro', () => {
  /** Two types of two publishers, two entities, four events one second apart at 10:mm of 2098-03-01. */
  async function quatroEventos(minuto: number) {
    const outro = await criarCenario(ctx);
    const [x, y] = [unico('entidade'), unico('entidade')];
    const em = (s: number) => new Date(Date.UTC(2098, 2, 1, 10, minuto, s));
    const e1 = await gravarEvento(ctx.hub.db, cenario, { recebidoEm: em(0), entidadeId: x });
    const e2 = await gravarEvento(ctx.hub.db, cenario, { recebidoEm: em(1), entidadeId: y });
    const e3 = await gravarEvento(ctx.hub.db, outro, { recebidoEm: em(2), entidadeId: x });
    const e4 = await gravarEvento(ctx.hub.db, outro, { recebidoEm: em(3), entidadeId: y });
    return { outro, x, y, e1: e1.id, e2: e2.id, e3: e3.id, e4: e4.id };
  }

  async function filtro(query: Record<string, string>) {
    const response = await ctx.api().get('/evento/filtro').query(query).set(ler());
    expect(response.status).toBe(200);
    return response.body as { id: string }[];
  }

  test('When each filter is given alone, then exactly its matches come, newest first, without dados', async () => {
    const { outro, x, e1, e2, e3, e4 } = await quatroEventos(0);
    expect(ids(await filtro({ id: e3 }))).toEqual([e3]);
    expect(ids(await filtro({ id: e3.toUpperCase() }))).toEqual([e3]);
    expect(ids(await filtro({ tipo_de_evento_id: outro.tipoId }))).toEqual([e4, e3]);
    expect(ids(await filtro({ aplicativo_publicador_id: outro.aplicativoId }))).toEqual([e4, e3]);
    expect(ids(await filtro({ entidade_id: x }))).toEqual([e3, e1]);
    expect(ids(await filtro({ entidade_id: `  ${x}\t` }))).toEqual([e3, e1]);
    // Only the events of 2099 (the page test's) are newer, and those of 2097 and 2001 older.
    expect(ids(await filtro({ desde: '2098-03-01T10:00:01.000Z' })).slice(-3)).toEqual([e4, e3, e2]);
    expect(ids(await filtro({ ate: '2098-03-01T10:00:02.000Z' })).slice(0, 3)).toEqual([e3, e2, e1]);
    expect((await filtro({ id: e1 }))[0]).not.toHaveProperty('dados');
    expect((await filtro({ id: e1 }))[0]).toMatchObject({ id: e1, quantidade_de_entregas: 0 });
  });

  test('When desde and ate are given, then both bounds are inclusive, in any RFC 3339 offset', async () => {
    const { e2, e3 } = await quatroEventos(1);
    expect(ids(await filtro({ desde: '2098-03-01T10:01:01.000Z', ate: '2098-03-01T10:01:02.000Z' }))).toEqual([e3, e2]);
    expect(ids(await filtro({ desde: '2098-03-01T07:01:01-03:00', ate: '2098-03-01T13:01:02+03:00' }))).toEqual([
      e3,
      e2,
    ]);
  });

  test('When filters are combined, then only events matching all of them come', async () => {
    const { outro, x, y, e1, e4 } = await quatroEventos(2);
    expect(ids(await filtro({ tipo_de_evento_id: cenario.tipoId, entidade_id: x }))).toEqual([e1]);
    expect(
      ids(
        await filtro({ aplicativo_publicador_id: outro.aplicativoId, entidade_id: y, desde: '2098-03-01T10:00:03Z' }),
      ),
    ).toEqual([e4]);
    expect(ids(await filtro({ id: e1, tipo_de_evento_id: outro.tipoId }))).toEqual([]);
    expect(
      ids(
        await filtro({
          id: e4,
          tipo_de_evento_id: outro.tipoId,
          aplicativo_publicador_id: outro.aplicativoId,
          entidade_id: y,
          desde: '2098-03-01T10:02:03.000Z',
          ate: '2098-03-01T10:02:03.000Z',
        }),
      ),
    ).toEqual([e4]);
  });

  test('When more than 200 events match, then the 200 newest come', async () => {
    const entidade = unico('muitos');
    const base = Date.UTC(2097, 0, 1);
    const linhas = Array.from({ length: 205 }, (_, i) => ({
      id: uuidv7(),
      tipoDeEventoId: cenario.tipoId,
      versaoDoEsquema: 1,
      aplicativoPublicadorId: cenario.aplicativoId,
      entidadeId: entidade,
      ocorridoEm: new Date(base + i * 1000),
      recebidoEm: new Date(base + i * 1000),
      dados: {},
    }));
    await ctx.hub.db.evento.createMany({ data: linhas });
    const achados = await filtro({ entidade_id: entidade });
    expect(achados).toHaveLength(200);
    expect(ids(achados)).toEqual(
      linhas
        .slice(5)
        .reverse()
        .map((l) => l.id),
    );
  });

  test.each(
    (
      [
        ['desde', 'ontem'],
        ['desde', '2098-03-01'],
        ['ate', '2098-13-01T10:00:00Z'],
        ['ate', '2098-03-01T10:00:00'],
        ['id', 'abc'],
        ['tipo_de_evento_id', '123'],
        ['aplicativo_publicador_id', 'not-a-uuid'],
        ['entidade_id', 'x'.repeat(201)],
      ] as [string, string][]
    ).map(([parametro, valor]) => ({
      parametro,
      valor,
      como: valor.length > 40 ? `${valor.length} characters` : valor,
    })),
  )('When $parametro is malformed ($como), then 400 consulta_invalida', async ({ parametro, valor }) => {
    const response = await ctx
      .api()
      .get('/evento/filtro')
      .query({ [parametro]: valor })
      .set(ler());
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ status: 400, codigo: 'consulta_invalida' });
    expect(response.body.detail).toContain(parametro);
  });
});
