import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { baldeDaLatencia, ERRO_MAXIMO_DA_LATENCIA, latenciaDoBalde } from '@hub/hub-data';
import { type Cenario, criarCenario, gravarEvento, somarResumo } from './linhas.test-support';

// The summary's clock, driven by the test: 10:20 of a day far from the real one.
const AGORA = new Date('2030-01-15T10:20:00.000Z');
let ctx: Contexto;
let cenario: Cenario;
beforeAll(async () => {
  ctx = await iniciarContexto({ relogio: () => AGORA });
  cenario = await criarCenario(ctx);
});
afterAll(() => encerrarContexto(ctx));

async function resumo() {
  const response = await ctx.api().get('/evento/resumo').set(auth(ctx.leitor));
  expect(response.status).toBe(200);
  return response.body;
}

describe('GET /evento/resumo', () => {
  test('When tallies exist, then por_hora has 24 one-hour bands from 23 hours ago to the current hour, zeros included, and the totals sum them', async () => {
    const hora = (iso: string) => new Date(iso);
    // Outside the window: the hour before the oldest band, and an hour after the current one.
    await somarResumo(ctx.hub.db, hora('2030-01-14T10:00:00.000Z'), 0, { eventos: 1000, recusados: 1000 });
    await somarResumo(ctx.hub.db, hora('2030-01-15T11:00:00.000Z'), 0, { eventos: 1000, tentativasComFalha: 1000 });
    // The oldest band, a band in the middle with two slices, the current hour.
    await somarResumo(ctx.hub.db, hora('2030-01-14T11:00:00.000Z'), 0, { eventos: 2, entregasConcluidas: 5 });
    await somarResumo(ctx.hub.db, hora('2030-01-15T03:00:00.000Z'), 3, {
      eventos: 4,
      recusados: 1,
      tentativasComFalha: 2,
    });
    await somarResumo(ctx.hub.db, hora('2030-01-15T03:00:00.000Z'), 11, {
      eventos: 6,
      recusados: 2,
      entregasConcluidas: 7,
      tentativasComFalha: 3,
    });
    await somarResumo(ctx.hub.db, hora('2030-01-15T10:00:00.000Z'), 15, { eventos: 1, tentativasComFalha: 4 });

    const corpo = await resumo();
    expect(corpo.por_hora).toHaveLength(24);
    expect(corpo.por_hora[0]).toEqual({
      hora: '2030-01-14T11:00:00.000Z',
      eventos: 2,
      recusados: 0,
      entregas_com_falha: 0,
      latencia_p50_ms: null,
      latencia_p99_ms: null,
    });
    expect(corpo.por_hora[16]).toEqual({
      hora: '2030-01-15T03:00:00.000Z',
      eventos: 10,
      recusados: 3,
      entregas_com_falha: 5,
      latencia_p50_ms: null,
      latencia_p99_ms: null,
    });
    expect(corpo.por_hora[23]).toEqual({
      hora: '2030-01-15T10:00:00.000Z',
      eventos: 1,
      recusados: 0,
      entregas_com_falha: 4,
      latencia_p50_ms: null,
      latencia_p99_ms: null,
    });
    expect(corpo.por_hora[1]).toEqual({
      hora: '2030-01-14T12:00:00.000Z',
      eventos: 0,
      recusados: 0,
      entregas_com_falha: 0,
      latencia_p50_ms: null,
      latencia_p99_ms: null,
    });
    const horas = corpo.por_hora.map((b: { hora: string }) => Date.parse(b.hora));
    expect(horas.slice(1).every((h: number, i: number) => h - horas[i] === 3_600_000)).toBe(true);
    expect(corpo).toMatchObject({
      eventos_nas_ultimas_24_horas: 13,
      recusados_nas_ultimas_24_horas: 3,
      entregues_nas_ultimas_24_horas: 12,
      tentativas_com_falha_nas_ultimas_24_horas: 9,
    });
  });

  test("When an hour's latency histogram is spread over slices, then its band gives p50 and p99 of the slices summed, and hours without concluded deliveries give null", async () => {
    const hora = new Date('2030-01-15T07:00:00.000Z');
    // 60 deliveries at 20 ms and 39 at 300 ms in slice 2, 1 at 90 s in slice 9: p50 = 20 ms,
    // p99 = the 99th of 100 = 300 ms; the window's first hour outside (an hour too old) counts nothing.
    const linhas: [Date, number, number, number][] = [
      [hora, 2, baldeDaLatencia(20), 40],
      [hora, 9, baldeDaLatencia(20), 20],
      [hora, 2, baldeDaLatencia(300), 39],
      [hora, 9, baldeDaLatencia(90_000), 1],
      [new Date('2030-01-14T10:00:00.000Z'), 0, baldeDaLatencia(5), 1_000],
    ];
    for (const [h, fatia, balde, entregas] of linhas)
      await ctx.hub.db.resumoLatenciaPorHora.create({ data: { hora: h, fatia, balde, entregas } });

    const corpo = await resumo();
    const banda = corpo.por_hora.find((b: { hora: string }) => b.hora === hora.toISOString());
    const perto = (ms: number) => [ms * (1 - ERRO_MAXIMO_DA_LATENCIA), ms * (1 + ERRO_MAXIMO_DA_LATENCIA)];
    expect(banda.latencia_p50_ms).toBe(latenciaDoBalde(baldeDaLatencia(20)));
    expect(banda.latencia_p99_ms).toBe(latenciaDoBalde(baldeDaLatencia(300)));
    const [p50min, p50max] = perto(20);
    const [p99min, p99max] = perto(300);
    expect(banda.latencia_p50_ms).toBeGreaterThanOrEqual(p50min as number);
    expect(banda.latencia_p50_ms).toBeLessThanOrEqual(p50max as number);
    expect(banda.latencia_p99_ms).toBeGreaterThanOrEqual(p99min as number);
    expect(banda.latencia_p99_ms).toBeLessThanOrEqual(p99max as number);
    expect(corpo.por_hora[0]).toMatchObject({
      hora: '2030-01-14T11:00:00.000Z',
      latencia_p50_ms: null,
      latencia_p99_ms: null,
    });

    // 2 more at 90 s: 102 in all, the 51st is still 20 ms, the 101st (99 %) now 90 s
    await ctx.hub.db.resumoLatenciaPorHora.create({
      data: { hora, fatia: 4, balde: baldeDaLatencia(90_000), entregas: 2 },
    });
    const depois = (await resumo()).por_hora.find((b: { hora: string }) => b.hora === hora.toISOString());
    expect([depois.latencia_p50_ms, depois.latencia_p99_ms]).toEqual([
      latenciaDoBalde(baldeDaLatencia(20)),
      latenciaDoBalde(baldeDaLatencia(90_000)),
    ]);
  });

  test('When deliveries are open, then pendentes counts pendente and em_andamento, and the waiting and error queues are counted apart; final ones are not counted', async () => {
    const antes = await resumo();
    await gravarEvento(ctx.hub.db, cenario, {
      recebidoEm: AGORA,
      entregas: [
        'pendente',
        'pendente',
        'em_andamento',
        'aguardando_nova_tentativa',
        'fila_de_erro',
        'fila_de_erro',
        'fila_de_erro',
        'concluida',
        'cancelada',
      ],
    });
    const depois = await resumo();
    expect({
      pendentes: depois.entregas_pendentes - antes.entregas_pendentes,
      aguardando: depois.entregas_aguardando_nova_tentativa - antes.entregas_aguardando_nova_tentativa,
      erro: depois.entregas_na_fila_de_erro - antes.entregas_na_fila_de_erro,
    }).toEqual({ pendentes: 3, aguardando: 1, erro: 3 });
  });

  test('When registrations are switched off or deleted, then only active applications, types and subscriptions are counted', async () => {
    const antes = await resumo();
    const novo = await criarCenario(ctx);
    const depoisDeCriar = await resumo();
    // A scenario adds two applications, one type and one subscription.
    expect({
      aplicativos: depoisDeCriar.aplicativos_ativos - antes.aplicativos_ativos,
      tipos: depoisDeCriar.tipos_de_evento_ativos - antes.tipos_de_evento_ativos,
      assinaturas: depoisDeCriar.assinaturas_ativas - antes.assinaturas_ativas,
    }).toEqual({ aplicativos: 2, tipos: 1, assinaturas: 1 });

    const editar = async (path: string, body: Record<string, unknown>) =>
      expect((await ctx.api().patch(path).set(auth(ctx.todas)).send(body)).status).toBe(200);
    await editar(`/aplicativo/${novo.assinanteId}`, { ativo: false });
    await editar(`/tipo-de-evento/${novo.tipoId}`, { ativo: false });
    expect((await ctx.api().delete(`/assinatura/${novo.assinaturaId}`).set(auth(ctx.todas))).status).toBe(204);
    const outra = await criarCenario(ctx);
    await editar(`/assinatura/${outra.assinaturaId}`, { ativa: false });

    const depois = await resumo();
    expect({
      aplicativos: depois.aplicativos_ativos - antes.aplicativos_ativos,
      tipos: depois.tipos_de_evento_ativos - antes.tipos_de_evento_ativos,
      assinaturas: depois.assinaturas_ativas - antes.assinaturas_ativas,
    }).toEqual({ aplicativos: 3, tipos: 1, assinaturas: 0 });
  });

  test('When nothing happened in the window, then every band is zero and the answer has every field of ResumoDosEventos', async () => {
    const outro = await iniciarContexto({ relogio: () => new Date('2031-06-01T00:00:00.000Z') });
    try {
      const response = await outro.api().get('/evento/resumo').set(auth(outro.leitor));
      expect(Object.keys(response.body).sort()).toEqual(
        [
          'eventos_nas_ultimas_24_horas',
          'recusados_nas_ultimas_24_horas',
          'entregues_nas_ultimas_24_horas',
          'tentativas_com_falha_nas_ultimas_24_horas',
          'entregas_pendentes',
          'entregas_aguardando_nova_tentativa',
          'entregas_na_fila_de_erro',
          'aplicativos_ativos',
          'tipos_de_evento_ativos',
          'assinaturas_ativas',
          'por_hora',
        ].sort(),
      );
      expect(response.body.por_hora[0].hora).toBe('2031-05-31T01:00:00.000Z');
      expect(response.body.por_hora[23].hora).toBe('2031-06-01T00:00:00.000Z');
      expect(
        response.body.por_hora.every(
          (b: { eventos: number; recusados: number; entregas_com_falha: number }) =>
            b.eventos + b.recusados + b.entregas_com_falha === 0,
        ),
      ).toBe(true);
      expect(response.body.eventos_nas_ultimas_24_horas).toBe(0);
      expect(
        response.body.por_hora.every(
          (b: { latencia_p50_ms: number | null; latencia_p99_ms: number | null }) =>
            b.latencia_p50_ms === null && b.latencia_p99_ms === null,
        ),
      ).toBe(true);
    } finally {
      await encerrarContexto(outro);
    }
  });
});
