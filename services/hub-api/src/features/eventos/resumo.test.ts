import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
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
    });
    expect(corpo.por_hora[16]).toEqual({
      hora: '2030-01-15T03:00:00.000Z',
      eventos: 10,
      recusados: 3,
      entregas_com_falha: 5,
    });
    expect(corpo.por_hora[23]).toEqual({
      hora: '2030-01-15T10:00:00.000Z',
      eventos: 1,
      recusados: 0,
      entregas_com_falha: 4,
    });
    expect(corpo.por_hora[1]).toEqual({
      hora: '2030-01-14T12:00:00.000Z',
      eventos: 0,
      recusados: 0,
      entregas_com_falha: 0,
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
    } finally {
      await encerrarContexto(outro);
    }
  });
});
