import { uuidv7 } from '@hub/database';
import { horaDoResumo, latenciaDoBalde } from '@hub/hub-data';
import { createLogger } from '@hub/log';
import { waitFor } from '@hub/testing';
import { type Cenario, criarCenario, gravarEvento, gravarTentativa } from '../features/eventos/linhas.test-support';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../contexto.test-support';
import type { Situacao } from '../features/eventos/eventos.schemas';
import { type Apagados, retencaoJob, SITUACOES_NAO_FINAIS } from './retencao.job';

const DIA = 86_400_000;
const HORA = 3_600_000;
// The clock of the hub's retention job and summary: the test moves it, nothing waits.
let agora = new Date('2040-06-10T12:00:00.000Z');
const antes = (ms: number) => new Date(agora.getTime() - ms);

let ctx: Contexto;
let curto: Cenario;
let longo: Cenario;
beforeAll(async () => {
  // Passes run when the tests say so; the scheduled one is tested on a job of its own.
  ctx = await iniciarContexto({ relogio: () => agora, env: { HUB_RETENCAO_INTERVALO: '1h' } });
  curto = await criarCenario(ctx, { retencao_em_dias: 1 });
  longo = await criarCenario(ctx, { retencao_em_dias: 30 });
});
afterAll(() => encerrarContexto(ctx));

const db = () => ctx.hub.db;
const existe = async (id: string) => (await db().evento.count({ where: { id } })) === 1;

async function comSaidas(evento: { id: string; entregas: string[] }) {
  for (const [i, entregaId] of evento.entregas.entries()) {
    await gravarTentativa(db(), entregaId, 1, 500 + i);
    await db().outbox.create({
      data: { id: uuidv7(), exchange: 'hub.entregas', routingKey: 'entrega', messageId: entregaId, body: {} },
    });
  }
  return evento;
}

async function listados(ids: string[]) {
  const achados = await Promise.all(
    ids.map(async (id) => (await ctx.api().get('/evento/filtro').query({ id }).set(auth(ctx.leitor))).body),
  );
  return ids.filter((_, i) => achados[i].length === 1);
}

describe('retention', () => {
  test("When an event is older than its type's retencao_em_dias, then it, its deliveries, their attempts and outbox rows are erased, and the panel no longer lists it", async () => {
    const velho = await comSaidas(
      await gravarEvento(db(), curto, { recebidoEm: antes(DIA + 1), entregas: ['concluida', 'cancelada'] }),
    );
    const noLimite = await gravarEvento(db(), curto, { recebidoEm: antes(DIA), entregas: ['pendente'] });
    const recente = await comSaidas(
      await gravarEvento(db(), curto, { recebidoEm: antes(23 * HORA), entregas: ['pendente'] }),
    );
    const deOutroTipo = await gravarEvento(db(), longo, { recebidoEm: antes(2 * DIA), entregas: ['concluida'] });
    const alheia = await db().outbox.create({
      data: { id: uuidv7(), exchange: 'hub.entregas', routingKey: 'entrega', messageId: uuidv7(), body: {} },
    });
    const totalAntes = (await ctx.api().get('/evento').set(auth(ctx.leitor))).body.total;

    const apagados = await ctx.hub.retencao.runNow();

    expect(apagados).toMatchObject({ eventos: 1, outbox: 2 });
    expect(await existe(velho.id)).toBe(false);
    expect(await db().entrega.count({ where: { eventoId: velho.id } })).toBe(0);
    expect(await db().tentativa.count({ where: { entregaId: { in: velho.entregas } } })).toBe(0);
    expect(await db().outbox.count({ where: { messageId: { in: velho.entregas } } })).toBe(0);
    // What is not older than its retention stays, with everything that hangs on it.
    expect(await db().outbox.count({ where: { messageId: { in: [...recente.entregas, alheia.messageId] } } })).toBe(2);
    expect(await db().tentativa.count({ where: { entregaId: { in: recente.entregas } } })).toBe(1);
    for (const id of [noLimite.id, recente.id, deOutroTipo.id])
      expect({ id, existe: await existe(id) }).toEqual({ id, existe: true });

    expect(await listados([velho.id, noLimite.id, recente.id, deOutroTipo.id])).toEqual([
      noLimite.id,
      recente.id,
      deOutroTipo.id,
    ]);
    expect((await ctx.api().get('/evento').set(auth(ctx.leitor))).body.total).toBe(totalAntes - 1);
  });

  test('When the clock moves past more events than one batch holds, then one pass erases them all, batch after batch', async () => {
    const eventos = [];
    for (let i = 0; i < 5; i++)
      eventos.push(await gravarEvento(db(), curto, { recebidoEm: antes(DIA - HORA), entregas: ['concluida'] }));
    expect(await ctx.hub.retencao.runNow()).toMatchObject({ eventos: 0 });

    agora = new Date(agora.getTime() + 2 * HORA);
    const job = retencaoJob({
      db: db(),
      logger: createLogger('retencao'),
      recusadosMs: 30 * DIA,
      intervaloMs: 60_000,
      lote: 2,
      relogio: () => agora,
    });
    const apagados = await job.runNow();
    expect(apagados.eventos).toBeGreaterThanOrEqual(5);
    expect(await db().evento.count({ where: { id: { in: eventos.map((e) => e.id) } } })).toBe(0);
  });

  test('When idempotency keys pass 24 h, refused events their configured time, hourly tallies and destinations’ minutes 48 h, then they are erased and younger ones kept', async () => {
    const chave = (nome: string, criadaEm: Date) =>
      db().chaveDeIdempotencia.create({
        data: { escopo: 'aplicativo:teste', chave: nome, impressao: 'x', eventoId: uuidv7(), criadaEm },
      });
    await chave('velha', antes(24 * HORA + 1));
    await chave('nova', antes(23 * HORA));
    const recusado = (recebidoEm: Date) =>
      db().eventoRecusado.create({
        data: { id: uuidv7(), codigo: 'dados_invalidos', statusHttp: 422, detalhe: 'x', recebidoEm },
      });
    const recusadoVelho = await recusado(antes(31 * DIA));
    const recusadoNovo = await recusado(antes(29 * DIA));
    const hora = (h: Date) => db().resumoPorHora.create({ data: { hora: h, fatia: 0, eventos: 1 } });
    const horaVelha = await hora(antes(49 * HORA));
    const horaNova = await hora(antes(47 * HORA));
    const latencia = (h: Date) =>
      db().resumoLatenciaPorHora.create({ data: { hora: h, fatia: 3, balde: 40, entregas: 2 } });
    await latencia(horaVelha.hora);
    await latencia(horaNova.hora);
    const destino = await db().destino.create({
      data: {
        id: uuidv7(),
        origem: `https://retencao-${uuidv7()}.example`,
        criadoEm: new Date(),
        atualizadoEm: new Date(),
      },
    });
    const minuto = (m: Date) =>
      db().destinoMinuto.create({
        data: { destinoId: destino.id, minuto: m, tentativas: 1, falhas: 0, duracoes: Array(12).fill(0) },
      });
    const minutoVelho = await minuto(antes(48 * HORA + 60_000));
    const minutoNovo = await minuto(antes(47 * HORA));

    // The hub's job: HUB_RECUSADOS_RETENCAO at its default of 30 days.
    await ctx.hub.retencao.runNow();
    expect(
      (await db().chaveDeIdempotencia.findMany({ where: { escopo: 'aplicativo:teste' } })).map((c) => c.chave),
    ).toEqual(['nova']);
    expect(await db().eventoRecusado.count({ where: { id: recusadoVelho.id } })).toBe(0);
    expect(await db().eventoRecusado.count({ where: { id: recusadoNovo.id } })).toBe(1);
    expect(await db().resumoPorHora.count({ where: { hora: horaVelha.hora } })).toBe(0);
    expect(await db().resumoPorHora.count({ where: { hora: horaNova.hora } })).toBe(1);
    expect(await db().resumoLatenciaPorHora.count({ where: { hora: horaVelha.hora } })).toBe(0);
    expect(await db().resumoLatenciaPorHora.count({ where: { hora: horaNova.hora } })).toBe(1);
    expect(
      (await db().destinoMinuto.findMany({ where: { destinoId: destino.id } })).map((m) => m.minuto.getTime()),
    ).toEqual([minutoNovo.minuto.getTime()]);
    expect(minutoVelho.minuto.getTime()).toBeLessThan(minutoNovo.minuto.getTime());

    // A shorter configured time erases the younger one too.
    const curtoPrazo = retencaoJob({
      db: db(),
      logger: createLogger('retencao'),
      recusadosMs: 7 * DIA,
      intervaloMs: 60_000,
      relogio: () => agora,
    });
    expect((await curtoPrazo.runNow()).recusados).toBeGreaterThanOrEqual(1);
    expect(await db().eventoRecusado.count({ where: { id: recusadoNovo.id } })).toBe(0);
  });

  test('When latency histograms of an hour that ended over an hour ago are spread over slices, then a pass folds them into one row per bucket, the summary answers the same, and the last two hours stay as written', async () => {
    const atual = horaDoResumo(agora).getTime();
    const linhas: [number, number, number, number][] = [
      // [hour, slice, bucket, deliveries]
      [atual - 3 * HORA, 0, 40, 2],
      [atual - 3 * HORA, 4, 40, 3],
      [atual - 3 * HORA, 9, 41, 5],
      [atual - 3 * HORA, 9, 80, 1],
      [atual - HORA, 1, 50, 2],
      [atual - HORA, 3, 50, 2],
      [atual, 2, 60, 1],
      [atual, 5, 60, 1],
    ];
    for (const [hora, fatia, balde, entregas] of linhas)
      await db().resumoLatenciaPorHora.create({ data: { hora: new Date(hora), fatia, balde, entregas } });
    const resumo = async () => {
      const resposta = await ctx.api().get('/evento/resumo').set(auth(ctx.leitor));
      expect(resposta.status).toBe(200);
      return resposta.body.por_hora;
    };
    const antesDaPassagem = await resumo();

    await ctx.hub.retencao.runNow();
    const daHora = async (hora: number) =>
      (
        await db().resumoLatenciaPorHora.findMany({
          where: { hora: new Date(hora) },
          orderBy: [{ fatia: 'asc' }, { balde: 'asc' }],
        })
      ).map((l) => [l.fatia, l.balde, l.entregas]);
    expect(await daHora(atual - 3 * HORA)).toEqual([
      [0, 40, 5],
      [0, 41, 5],
      [0, 80, 1],
    ]);
    expect(await daHora(atual - HORA)).toEqual([
      [1, 50, 2],
      [3, 50, 2],
    ]);
    expect(await daHora(atual)).toEqual([
      [2, 60, 1],
      [5, 60, 1],
    ]);
    expect(await resumo()).toEqual(antesDaPassagem);
    expect(
      antesDaPassagem.find((b: { hora: string }) => b.hora === new Date(atual - 3 * HORA).toISOString()),
    ).toMatchObject({
      latencia_p50_ms: latenciaDoBalde(41),
      latencia_p99_ms: latenciaDoBalde(80),
    });
  });

  test('When the job is started, then its passes run on their own every interval until it is stopped', async () => {
    const evento = await gravarEvento(db(), curto, { recebidoEm: antes(2 * DIA), entregas: ['concluida'] });
    const job = retencaoJob({
      db: db(),
      logger: createLogger('retencao'),
      recusadosMs: 30 * DIA,
      intervaloMs: 20,
      relogio: () => agora,
    }).start();
    try {
      const limite = Date.now() + 10_000;
      while ((await existe(evento.id)) && Date.now() < limite) await new Promise((r) => setTimeout(r, 25));
      expect(await existe(evento.id)).toBe(false);
    } finally {
      await job.stop();
    }
  });

  test('When an expired event still has a delivery pendente, em_andamento, aguardando_nova_tentativa or in fila_de_erro, then it is kept with its deliveries, attempts and outbox rows until every delivery is final', async () => {
    const mantidos = [];
    for (const situacao of SITUACOES_NAO_FINAIS)
      mantidos.push(
        await comSaidas(
          await gravarEvento(db(), curto, { recebidoEm: antes(3 * DIA), entregas: ['concluida', situacao] }),
        ),
      );
    const final = await gravarEvento(db(), curto, { recebidoEm: antes(3 * DIA), entregas: ['concluida', 'cancelada'] });

    await ctx.hub.retencao.runNow();

    expect(await existe(final.id)).toBe(false);
    for (const evento of mantidos) {
      expect({ id: evento.id, existe: await existe(evento.id) }).toEqual({ id: evento.id, existe: true });
      expect(await db().entrega.count({ where: { eventoId: evento.id } })).toBe(2);
      expect(await db().tentativa.count({ where: { entregaId: { in: evento.entregas } } })).toBe(2);
      expect(await db().outbox.count({ where: { messageId: { in: evento.entregas } } })).toBe(2);
    }
    // Delivered, or given up (the error queue's delivery cancelled): the next pass erases them.
    await db().entrega.updateMany({
      where: { eventoId: { in: mantidos.map((e) => e.id) }, situacao: { not: 'concluida' } },
      data: { situacao: 'cancelada' },
    });
    expect((await ctx.hub.retencao.runNow()).eventos).toBeGreaterThanOrEqual(mantidos.length);
    for (const evento of mantidos) expect(await existe(evento.id)).toBe(false);
  });

  test('When a delivery of an expired event is resent while a pass runs, then the pass waits for it and keeps the event', async () => {
    const evento = await gravarEvento(db(), curto, { recebidoEm: antes(3 * DIA), entregas: ['concluida'] });
    const [entregaId] = evento.entregas;
    let passe: Promise<unknown> | undefined;
    // As POST /entrega/{id}/reenviar does: the delivery locked and back to pendente, not yet committed.
    await db().$transaction(
      async (tx) => {
        await tx.$executeRaw`select id from entrega where id = ${entregaId}::uuid for update`;
        await tx.entrega.update({ where: { id: entregaId }, data: { situacao: 'pendente' } });
        passe = ctx.hub.retencao.runNow();
        await waitFor(
          async () =>
            (
              await db().$queryRaw<{ n: number }[]>`
                select count(*)::int as n from pg_stat_activity
                 where datname = current_database() and wait_event_type = 'Lock' and query like '%candidatos%'`
            )[0]!.n > 0,
          { what: 'the pass waiting on the locked delivery' },
        );
      },
      { timeout: 30_000 },
    );
    await passe;
    expect(await existe(evento.id)).toBe(true);
    expect((await db().entrega.findUniqueOrThrow({ where: { id: entregaId } })).situacao).toBe('pendente');
  });

  const jobDeLotes = (lote: number) =>
    retencaoJob({
      db: db(),
      logger: createLogger('retencao'),
      recusadosMs: 30 * DIA,
      intervaloMs: 60_000,
      lote,
      relogio: () => agora,
    });
  const expirados = async (quantos: number, entregas: Situacao[]) => {
    const eventos = [];
    for (let i = 0; i < quantos; i++)
      eventos.push(await gravarEvento(db(), curto, { recebidoEm: antes(4 * DIA + i), entregas }));
    return eventos.map((e) => e.id);
  };
  const restam = async (ids: string[]) => db().evento.count({ where: { id: { in: ids } } });

  test('When the oldest expired events must be kept, then a pass of small batches walks past them and erases every erasable one behind them', async () => {
    // Older than the erasable ones, so every batch of a walk from the oldest meets them first.
    const mantidos = (
      await Promise.all(
        [0, 1, 2].map((i) => gravarEvento(db(), curto, { recebidoEm: antes(6 * DIA + i), entregas: ['fila_de_erro'] })),
      )
    ).map((e) => e.id);
    const apagaveis = await expirados(7, ['concluida', 'cancelada']);

    expect((await jobDeLotes(2).runNow()).eventos).toBeGreaterThanOrEqual(apagaveis.length);

    expect(await restam(apagaveis)).toBe(0);
    expect(await restam(mantidos)).toBe(mantidos.length);
    // Once final, the next pass takes them.
    await db().entrega.updateMany({ where: { eventoId: { in: mantidos } }, data: { situacao: 'cancelada' } });
    await jobDeLotes(2).runNow();
    expect(await restam(mantidos)).toBe(0);
  });

  test('When two replicas run a pass at once, then each expired event is erased once, the kept ones stay and the stored total stays exact', async () => {
    await ctx.hub.retencao.runNow();
    const mantido = await expirados(1, ['concluida', 'aguardando_nova_tentativa']);
    const apagaveis = await expirados(12, ['concluida']);
    const totalAntes = (await ctx.api().get('/evento').set(auth(ctx.leitor))).body.total;

    const [a, b] = await Promise.all([jobDeLotes(2).runNow(), jobDeLotes(2).runNow()]);

    expect(a.eventos + b.eventos).toBe(apagaveis.length);
    expect(await restam(apagaveis)).toBe(0);
    expect(await restam(mantido)).toBe(1);
    expect(await db().entrega.count({ where: { eventoId: mantido[0] } })).toBe(2);
    expect((await ctx.api().get('/evento').set(auth(ctx.leitor))).body.total).toBe(totalAntes - apagaveis.length);
  });

  test('When a pass is stopped between batches and another replica starts, then it erases the rest and no event is left without its deliveries', async () => {
    await ctx.hub.retencao.runNow();
    const apagaveis = await expirados(10, ['concluida', 'concluida']);
    const totalAntes = (await ctx.api().get('/evento').set(auth(ctx.leitor))).body.total;
    // The second oldest's deliveries locked (as a resend holds them): the pass's second batch waits
    // there, and the replica is stopped while it waits, so it ends after that batch.
    const primeiro = jobDeLotes(1);
    let passe: Promise<Apagados> | undefined;
    let parada: Promise<void> | undefined;
    const segundoMaisVelho = apagaveis[apagaveis.length - 2]!;
    await db().$transaction(
      async (tx) => {
        await tx.$executeRaw`select id from entrega where evento_id = ${segundoMaisVelho}::uuid for update`;
        passe = primeiro.runNow();
        await waitFor(
          async () =>
            (
              await db().$queryRaw<{ n: number }[]>`
                select count(*)::int as n from pg_stat_activity
                 where datname = current_database() and wait_event_type = 'Lock' and query like '%candidatos%'`
            )[0]!.n > 0,
          { what: 'the second batch waiting on the locked deliveries' },
        );
        parada = primeiro.stop();
      },
      { timeout: 30_000 },
    );
    await parada;
    const parcial = await passe!;
    expect(parcial.eventos).toBe(2);
    expect(await restam(apagaveis)).toBe(apagaveis.length - 2);

    const segundo = await jobDeLotes(3).runNow();

    expect(parcial.eventos + segundo.eventos).toBe(apagaveis.length);
    expect(await restam(apagaveis)).toBe(0);
    expect(await db().entrega.count({ where: { eventoId: { in: apagaveis } } })).toBe(0);
    expect((await ctx.api().get('/evento').set(auth(ctx.leitor))).body.total).toBe(totalAntes - apagaveis.length);
  });
});
