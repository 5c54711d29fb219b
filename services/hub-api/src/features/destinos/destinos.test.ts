import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate, uuidv7 } from '@hub/database';
import { createTestDatabase } from '@hub/testing';
import { BALDES_DE_DURACAO, createDb, HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
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
let tipoId: string;
let assinanteId: string;
beforeAll(async () => {
  ctx = await iniciarContexto();
  assinanteId = (await criarAplicativo(ctx, 'Assinante')).id;
  tipoId = (await criarTipo(ctx)).id;
  await criarVersao(ctx, tipoId);
  await criarVersao(ctx, tipoId);
});
afterAll(() => encerrarContexto(ctx));

const editar = () => auth(ctx.todas);
const ler = () => auth(ctx.leitor);
let versao = 0;

/** A subscription through POST /assinatura (each on its own version, so that none is a duplicate). */
async function assinar(url: string) {
  versao = (versao % 2) + 1;
  const response = await ctx
    .api()
    .post('/assinatura')
    .set(editar())
    .send({
      aplicativo_assinante_id: assinanteId,
      tipo_de_evento_id: tipoId,
      versao_do_esquema: versao,
      url_de_destino: `${url}/${uuidv7()}`,
    });
  expect(response.status).toBe(201);
  return response.body as { id: string; url_de_destino: string };
}

async function destinoDe(origem: string) {
  const linha = await ctx.hub.db.destino.findUnique({ where: { origem } });
  if (!linha) throw new Error(`no destination row for ${origem}`);
  const response = await ctx.api().get(`/destino/${linha.id}`).set(ler());
  expect(response.status).toBe(200);
  return response.body;
}

describe('destinations of subscriptions', () => {
  test('When subscriptions are created on one origin, then that origin has one row counting them', async () => {
    await assinar('https://Loja-A.example:443/hooks');
    await assinar('https://loja-a.example/outro');
    expect(await destinoDe('https://loja-a.example')).toMatchObject({
      origem: 'https://loja-a.example',
      assinaturas: 2,
      em_andamento: 0,
      concorrencia_maxima: 10,
      limite_por_segundo: null,
      pausado: false,
      isolamento: null,
      tentativas_na_ultima_hora: 0,
      falhas_na_ultima_hora: 0,
      latencia_p50_ms: null,
      latencia_p99_ms: null,
    });
  });

  test('When a subscription moves to another origin, then the new origin gets its row and the old one loses it', async () => {
    const assinatura = await assinar('https://loja-b.example:8443');
    const antes = await destinoDe('https://loja-b.example:8443');
    const patch = await ctx
      .api()
      .patch(`/assinatura/${assinatura.id}`)
      .set(editar())
      .send({ url_de_destino: 'http://loja-c.example:8080/novo' });
    expect(patch.status).toBe(200);
    expect(await destinoDe('http://loja-c.example:8080')).toMatchObject({ assinaturas: 1 });
    expect(await destinoDe('https://loja-b.example:8443')).toMatchObject({ id: antes.id, assinaturas: 0 });
  });

  test('When the page is read, then origins come in alphabetical order in the page frame', async () => {
    await assinar('http://aaa-primeira.example');
    const response = await ctx.api().get('/destino').query({ pagina: 1, tamanho: 500 }).set(ler());
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ pagina: 1, tamanho: 500 });
    const origens = (response.body.itens as { origem: string }[]).map((d) => d.origem);
    expect(origens).toEqual([...origens].sort());
    expect(origens[0]).toBe('http://aaa-primeira.example');
    expect(response.body.total).toBe(origens.length);
  });
});

describe('limits and pause', () => {
  let id: string;
  beforeAll(async () => {
    await assinar('https://limites.example');
    id = (await destinoDe('https://limites.example')).id;
  });

  test('When a reader changes a destination, then 403; without a token, 401; an unknown id, 404', async () => {
    for (const [method, path] of [
      ['patch', `/destino/${id}`],
      ['post', `/destino/${id}/pausar`],
      ['post', `/destino/${id}/retomar`],
    ] as const) {
      expect((await ctx.api()[method](path).send({})).status).toBe(401);
      expect((await ctx.api()[method](path).set(ler()).send({})).status).toBe(403);
      expect((await ctx.api()[method](path.replace(id, uuidv7())).set(editar()).send({})).status).toBe(404);
    }
    expect((await ctx.api().get(`/destino/${uuidv7()}`).set(ler())).status).toBe(404);
  });

  test('When the limits are set and the per-second limit removed, then the row says so', async () => {
    const set = await ctx
      .api()
      .patch(`/destino/${id}`)
      .set(editar())
      .send({ concorrencia_maxima: 3, limite_por_segundo: 25 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ concorrencia_maxima: 3, limite_por_segundo: 25 });
    const cleared = await ctx.api().patch(`/destino/${id}`).set(editar()).send({ limite_por_segundo: null });
    expect(cleared.body).toMatchObject({ concorrencia_maxima: 3, limite_por_segundo: null });
    expect(await ctx.hub.db.destino.findUniqueOrThrow({ where: { id } })).toMatchObject({
      concorrenciaMaxima: 3,
      limitePorSegundo: null,
    });
  });

  test('When a limit is out of range or a field is unknown, then 422 and nothing changes', async () => {
    const antes = await ctx.hub.db.destino.findUniqueOrThrow({ where: { id } });
    for (const body of [
      { concorrencia_maxima: 0 },
      { concorrencia_maxima: 1001 },
      { concorrencia_maxima: 2.5 },
      { limite_por_segundo: 0 },
      { limite_por_segundo: 100_001 },
      { pausado: true },
      { concorrencia_maxima: '5' },
    ]) {
      const response = await ctx.api().patch(`/destino/${id}`).set(editar()).send(body);
      expect({ body, status: response.status }).toEqual({ body, status: 422 });
    }
    expect(await ctx.hub.db.destino.findUniqueOrThrow({ where: { id } })).toEqual(antes);
  });

  test('When a destination is paused and resumed, then pausado follows', async () => {
    const pausado = await ctx.api().post(`/destino/${id}/pausar`).set(editar());
    expect(pausado.status).toBe(200);
    expect(pausado.body.pausado).toBe(true);
    const retomado = await ctx.api().post(`/destino/${id}/retomar`).set(editar());
    expect(retomado.body.pausado).toBe(false);
  });

  test('When a destination is resumed, then the row remembers when (the workers leave its deliveries to their jobs still coming back from the pause)', async () => {
    const antes = Date.now();
    await ctx.api().post(`/destino/${id}/pausar`).set(editar());
    expect((await ctx.api().post(`/destino/${id}/retomar`).set(editar())).status).toBe(200);
    const { retomadoEm } = await ctx.hub.db.destino.findUniqueOrThrow({ where: { id } });
    expect(retomadoEm?.getTime()).toBeGreaterThanOrEqual(antes - 1000);
  });
});

describe('the circuit breaker', () => {
  let id: string;
  beforeAll(async () => {
    await assinar('https://circuito.example');
    id = (await destinoDe('https://circuito.example')).id;
  });

  /** What the delivery workers write when failures open a circuit, with its line of history. */
  async function abrirComoOsWorkers(falhas: number) {
    const em = new Date();
    const abertoAte = new Date(em.getTime() + 30_000);
    await ctx.hub.db.destino.update({
      where: { id },
      data: { circuito: 'aberto', circuitoDesde: em, circuitoAberturas: 1, circuitoAbertoAte: abertoAte },
    });
    await ctx.hub.db.destinoCircuito.create({
      data: {
        id: uuidv7(),
        destinoId: id,
        em,
        de: 'fechado',
        para: 'aberto',
        motivo: 'falhas',
        detalhe: `${falhas} of ${falhas} attempts failed`,
        falhas,
        tentativas: falhas,
        abertoAte,
      },
    });
    return { em, abertoAte };
  }

  test('When a destination never failed, then its circuit is closed, never changed, with no history', async () => {
    expect((await destinoDe('https://circuito.example')).circuito).toEqual({
      situacao: 'fechado',
      desde: null,
      aberto_ate: null,
      aberturas_seguidas: 0,
      historico: [],
    });
  });

  test('When the workers opened the circuit, then GET /destino and its item show the state, since when, until when, and the opening with the failures counted', async () => {
    const { em, abertoAte } = await abrirComoOsWorkers(12);
    const esperado = {
      situacao: 'aberto',
      desde: em.toISOString(),
      aberto_ate: abertoAte.toISOString(),
      aberturas_seguidas: 1,
      historico: [
        {
          em: em.toISOString(),
          de: 'fechado',
          para: 'aberto',
          motivo: 'falhas',
          detalhe: '12 of 12 attempts failed',
          falhas: 12,
          tentativas: 12,
          aberto_ate: abertoAte.toISOString(),
          por: null,
        },
      ],
    };
    expect((await destinoDe('https://circuito.example')).circuito).toEqual(esperado);
    const pagina = await ctx.api().get('/destino').query({ tamanho: 500 }).set(ler());
    expect(pagina.body.itens.find((d: { id: string }) => d.id === id).circuito).toEqual(esperado);
  });

  test('When a reader closes a circuit, then 403; without a token, 401; an unknown id, 404 in the problem shape', async () => {
    const path = `/destino/${id}/fechar-circuito`;
    expect((await ctx.api().post(path)).status).toBe(401);
    const proibido = await ctx.api().post(path).set(ler());
    expect(proibido.status).toBe(403);
    const desconhecido = await ctx.api().post(`/destino/${uuidv7()}/fechar-circuito`).set(editar());
    expect(desconhecido.status).toBe(404);
    expect(desconhecido.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(desconhecido.body).toMatchObject({ status: 404, codigo: expect.any(String), detail: expect.any(String) });
    expect((await destinoDe('https://circuito.example')).circuito.situacao).toBe('aberto');
  });

  test('When an operator closes an open circuit by hand, then it is closed from now with its count reset, the history says who, and closing it again changes nothing', async () => {
    const antes = Date.now();
    const fechado = await ctx.api().post(`/destino/${id}/fechar-circuito`).set(editar());
    expect(fechado.status).toBe(200);
    const { circuito } = fechado.body;
    expect(circuito).toMatchObject({ situacao: 'fechado', aberto_ate: null, aberturas_seguidas: 0 });
    expect(Date.parse(circuito.desde)).toBeGreaterThanOrEqual(antes - 1000);
    expect(circuito.historico[0]).toMatchObject({
      de: 'aberto',
      para: 'fechado',
      motivo: 'manual',
      por: expect.stringMatching(/^monitor\./),
      falhas: null,
      aberto_ate: null,
    });
    expect(circuito.historico).toHaveLength(2);
    expect(await ctx.hub.db.destino.findUniqueOrThrow({ where: { id } })).toMatchObject({
      circuito: 'fechado',
      circuitoSonda: null,
      circuitoSondaAte: null,
      circuitoAbertoAte: null,
    });

    const denovo = await ctx.api().post(`/destino/${id}/fechar-circuito`).set(editar());
    expect(denovo.status).toBe(200);
    expect(denovo.body.circuito).toEqual(circuito);
  });

  test('When a circuit changes many times, then the table keeps its 50 latest transitions and the route shows the 10 latest, newest first', async () => {
    for (let i = 0; i < 30; i += 1) {
      await abrirComoOsWorkers(i + 1);
      expect((await ctx.api().post(`/destino/${id}/fechar-circuito`).set(editar())).status).toBe(200);
    }
    expect(await ctx.hub.db.destinoCircuito.count({ where: { destinoId: id } })).toBe(50);
    const { historico } = (await destinoDe('https://circuito.example')).circuito;
    expect(historico).toHaveLength(10);
    expect(historico.map((t: { motivo: string }) => t.motivo).slice(0, 2)).toEqual(['manual', 'falhas']);
    expect(historico[1].falhas).toBe(30);
  });
});

describe('figures of the last hour', () => {
  test('When workers reported attempts in flight and added minutes, then only their valid reports and the last hour count, and the percentiles follow the histogram', async () => {
    await assinar('https://figuras.example');
    const { id } = await destinoDe('https://figuras.example');
    // Two live workers' reports, and one of a worker killed a minute ago (its report expired).
    const emSegundos = (s: number) => new Date(Date.now() + s * 1000);
    await ctx.hub.db.destinoEmAndamento.createMany({
      data: [
        { destinoId: id, processo: uuidv7(), emAndamento: 2, validoAte: emSegundos(6) },
        { destinoId: id, processo: uuidv7(), emAndamento: 3, validoAte: emSegundos(6) },
        { destinoId: id, processo: uuidv7(), emAndamento: 7, validoAte: emSegundos(-60) },
      ],
    });
    const baldes = (indices: Record<number, number>) =>
      Array.from({ length: BALDES_DE_DURACAO }, (_, i) => indices[i] ?? 0);
    const agora = Date.now();
    const minuto = (atras: number) => new Date(Math.floor((agora - atras * 60_000) / 60_000) * 60_000);
    await ctx.hub.db.destinoMinuto.createMany({
      data: [
        { destinoId: id, minuto: minuto(1), tentativas: 60, falhas: 2, duracoes: baldes({ 1: 59, 9: 1 }) },
        { destinoId: id, minuto: minuto(30), tentativas: 40, falhas: 1, duracoes: baldes({ 2: 40 }) },
        // older than an hour: not counted
        { destinoId: id, minuto: minuto(61), tentativas: 500, falhas: 500, duracoes: baldes({ 11: 500 }) },
      ],
    });
    expect(await destinoDe('https://figuras.example')).toMatchObject({
      em_andamento: 5,
      tentativas_na_ultima_hora: 100,
      falhas_na_ultima_hora: 3,
      latencia_p50_ms: 10,
      latencia_p99_ms: 25,
    });
  });
});

describe('migration of existing subscriptions', () => {
  test('When the destinations migration runs over a database with subscriptions, then each origin gets one row with a UUIDv7', async () => {
    const antes = await mkdtemp(path.join(tmpdir(), 'hub-migrations-'));
    try {
      for (const file of await readdir(HUB_DATA_MIGRATIONS_DIR))
        if (file < '008') await copyFile(path.join(HUB_DATA_MIGRATIONS_DIR, file), path.join(antes, file));
      const database = await createTestDatabase('hubdest', antes);
      const db = createDb(database.url);
      try {
        const [tipo] = await db.$queryRaw<{ id: string }[]>`select id::text from tipo_de_evento limit 1`;
        const [aplicativo] = await db.$queryRaw<{ id: string }[]>`select id::text from aplicativo limit 1`;
        const agora = new Date();
        // In SQL: the Prisma client knows the columns of later migrations (it would read them back).
        for (const url of ['https://velha.example/a', 'https://velha.example/b', 'http://outra.example:81/c'])
          await db.$executeRaw`
            insert into assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino,
                                    maximo_de_tentativas, ativa, criado_em, atualizado_em)
            values (${uuidv7()}::uuid, ${aplicativo!.id}::uuid, ${tipo!.id}::uuid, 1, ${url}, 8, true, ${agora}, ${agora})`;
        await migrate(database.url, HUB_DATA_MIGRATIONS_DIR);
        const linhas = await db.destino.findMany({ orderBy: { origem: 'asc' } });
        expect(linhas.map((l) => l.origem)).toEqual(['http://outra.example:81', 'https://velha.example']);
        for (const linha of linhas)
          expect(linha.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      } finally {
        await db.$disconnect();
        await database.drop();
      }
    } finally {
      await rm(antes, { recursive: true, force: true });
    }
  });
});
