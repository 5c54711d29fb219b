import { uuidv7 } from '@hub/database';
import { waitFor } from '@hub/testing';
import { auth, expectPagina, ISO_MS } from '../../contexto.test-support';
import { type Cenario, criarCenario, gravarEvento } from '../eventos/linhas.test-support';
import {
  type ContextoComFila,
  idsNaFila,
  iniciarContextoComFila,
  jobsNaOutbox,
  porNaFilaDeErro,
  verificarConcordancia,
} from '../fila/fila-de-erro.test-support';

let ctx: ContextoComFila;
let cenario: Cenario;
// Requests start when made; the runner's timer alone would take a hand-made pendente one only after an hour.
beforeAll(async () => {
  ctx = await iniciarContextoComFila({ HUB_REPROCESSAMENTO_INTERVALO: '1h', HUB_REPROCESSAMENTO_LOTE: '2' });
  cenario = await criarCenario(ctx);
}, 60_000);
afterAll(() => ctx?.encerrar());

const ler = () => auth(ctx.leitor);
const editar = () => auth(ctx.todas);

/** n deliveries of one event put into the error queue as the worker does, 3 attempts made. */
async function naFilaDeErro(c: Cenario, n: number, recebidoEm = new Date('2021-06-01T00:00:00.000Z')) {
  const evento = await gravarEvento(ctx.hub.db, c, {
    recebidoEm,
    entregas: Array.from({ length: n }, () => 'pendente' as const),
  });
  await porNaFilaDeErro(ctx.hub, evento.entregas, 3);
  return evento.entregas;
}

async function solicitar(corpo: Record<string, unknown>) {
  const response = await ctx.api().post('/reprocessamento').set(editar()).send(corpo);
  if (response.status !== 202) throw new Error(`POST /reprocessamento answered ${response.status}: ${response.text}`);
  return response.body as { id: string; situacao: string; quantidade_de_entregas: number };
}

const concluida = (id: string) =>
  waitFor(
    async () => {
      const response = await ctx.api().get(`/reprocessamento/${id}`).set(ler());
      return response.body.situacao === 'concluida' ? response.body : undefined;
    },
    { what: 'the request to conclude' },
  );

/** At rest the error queue holds exactly one message per delivery in fila_de_erro. */
async function esperarConcordancia() {
  const naFila = async () =>
    (await ctx.hub.db.entrega.findMany({ where: { situacao: 'fila_de_erro' }, select: { id: true } })).map((e) => e.id);
  await waitFor(
    async () => {
      const c = await verificarConcordancia(ctx.hub);
      return c.concordam && JSON.stringify(c.ids_das_mensagens) === JSON.stringify((await naFila()).sort());
    },
    { what: 'the error queue to agree with the deliveries in fila_de_erro' },
  );
}

const situacoes = async (ids: string[]) =>
  (await ctx.hub.db.entrega.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } })).map((e) => ({
    situacao: e.situacao,
    ciclo: e.tentativasNoCicloAtual,
    total: e.quantidadeDeTentativas,
  }));

describe('who may use /reprocessamento', () => {
  test('When no token is sent, then 401; reading needs monitoramento.ler; asking and cancelling need editar', async () => {
    expect((await ctx.api().get('/reprocessamento')).status).toBe(401);
    expect((await ctx.api().get('/reprocessamento').set(auth(ctx.semMonitoramento))).status).toBe(403);
    expect((await ctx.api().get('/reprocessamento').set(ler())).status).toBe(200);
    expect((await ctx.api().post('/reprocessamento').set(ler()).send({})).status).toBe(403);
    expect((await ctx.api().delete(`/reprocessamento/${uuidv7()}`).set(ler())).status).toBe(403);
  });
});

describe('POST /reprocessamento', () => {
  test('When deliveries are asked by id, then those in fila_de_erro get a new cycle (attempts keep counting), one job each, and leave the error queue', async () => {
    const [a, b, c] = (await naFilaDeErro(cenario, 3)) as [string, string, string];
    const fora = (await gravarEvento(ctx.hub.db, cenario, { recebidoEm: new Date(), entregas: ['concluida'] }))
      .entregas[0]!;
    const pedido = await solicitar({ entrega_ids: [a, b, a.toUpperCase(), fora] });
    expect(pedido).toMatchObject({
      situacao: 'pendente',
      quantidade_de_entregas: 2,
      entrega_ids: [a, b, fora],
      assinatura_id: null,
      reprocessadas: 0,
      solicitada_pelo_email: expect.stringContaining('monitor.'),
      criada_em: expect.stringMatching(ISO_MS),
    });
    const fim = await concluida(pedido.id);
    expect(fim).toMatchObject({
      reprocessadas: 2,
      ignoradas: 0,
      iniciada_em: expect.stringMatching(ISO_MS),
      concluida_em: expect.stringMatching(ISO_MS),
    });
    expect(await situacoes([a, b, c].sort())).toEqual(
      [a, b, c]
        .sort()
        .map((id) =>
          id === c ? { situacao: 'fila_de_erro', ciclo: 3, total: 3 } : { situacao: 'pendente', ciclo: 0, total: 3 },
        ),
    );
    const jobs = await jobsNaOutbox(ctx.hub.db, [a, b, c, fora]);
    expect(Object.fromEntries(jobs)).toEqual({ [a]: 1, [b]: 1 });
    await esperarConcordancia();
    const fila = await idsNaFila(ctx.hub);
    expect(fila).toContain(c);
    expect(fila).not.toContain(a);
  });

  test('When a filter is given, then only the deliveries in fila_de_erro that match every part of it are reprocessed', async () => {
    const outro = await criarCenario(ctx);
    const doCenario = await naFilaDeErro(cenario, 2, new Date('2021-07-01T00:00:00.000Z'));
    const doOutroAntigas = await naFilaDeErro(outro, 2, new Date('2021-07-01T00:00:00.000Z'));
    const doOutroNovas = await naFilaDeErro(outro, 3, new Date('2021-08-01T00:00:00.000Z'));

    const porAssinaturaEPeriodo = await solicitar({
      assinatura_id: outro.assinaturaId,
      desde: '2021-07-15T00:00:00.000Z',
      ate: '2021-08-01T00:00:00.000Z',
    });
    expect(porAssinaturaEPeriodo.quantidade_de_entregas).toBe(3);
    expect((await concluida(porAssinaturaEPeriodo.id)).reprocessadas).toBe(3);
    expect((await situacoes(doOutroNovas)).every((s) => s.situacao === 'pendente')).toBe(true);
    expect((await situacoes([...doCenario, ...doOutroAntigas])).every((s) => s.situacao === 'fila_de_erro')).toBe(true);
    await esperarConcordancia();

    const porTipo = await solicitar({ tipo_de_evento_id: outro.tipoId });
    expect((await concluida(porTipo.id)).reprocessadas).toBe(2);
    expect((await situacoes(doOutroAntigas)).every((s) => s.situacao === 'pendente')).toBe(true);
    expect((await situacoes(doCenario)).every((s) => s.situacao === 'fila_de_erro')).toBe(true);
    await esperarConcordancia();
  });

  test('When the body is empty, then every delivery in fila_de_erro is reprocessed, except those of a switched-off subscription, which are counted as ignoradas and stay', async () => {
    const desligado = await criarCenario(ctx);
    const ficam = await naFilaDeErro(desligado, 2);
    await naFilaDeErro(cenario, 3);
    const patch = await ctx.api().patch(`/assinatura/${desligado.assinaturaId}`).set(editar()).send({ ativa: false });
    expect(patch.status).toBe(200);
    const antes = await ctx.hub.db.entrega.count({ where: { situacao: 'fila_de_erro' } });

    const tudo = await solicitar({});
    expect(tudo.quantidade_de_entregas).toBe(antes);
    const fim = await concluida(tudo.id);
    expect({ reprocessadas: fim.reprocessadas, ignoradas: fim.ignoradas }).toEqual({
      reprocessadas: antes - 2,
      ignoradas: 2,
    });
    const restantes = await ctx.hub.db.entrega.findMany({ where: { situacao: 'fila_de_erro' }, select: { id: true } });
    expect(restantes.map((e) => e.id).sort()).toEqual([...ficam].sort());
    await esperarConcordancia();
    expect(await idsNaFila(ctx.hub)).toEqual([...ficam].sort());
  });

  test('When the body breaks the rules, then 422 naming the field and no request is made', async () => {
    const antes = await ctx.hub.db.solicitacaoDeReprocessamento.count();
    const casos: [Record<string, unknown>, string][] = [
      [{ entrega_ids: [uuidv7()], assinatura_id: cenario.assinaturaId }, '/entrega_ids'],
      [{ desde: '2021-02-01T00:00:00Z', ate: '2021-01-01T00:00:00Z' }, '/ate'],
      [{ entrega_ids: [] }, '/entrega_ids'],
      [{ entrega_ids: ['nada'] }, '/entrega_ids/0'],
      [{ desde: 'ontem' }, '/desde'],
      [{ assinatura_id: uuidv7() }, '/assinatura_id'],
      [{ tipo_de_evento_id: uuidv7() }, '/tipo_de_evento_id'],
      [{ situacao: 'fila_de_erro' }, ''],
    ];
    for (const [corpo, caminho] of casos) {
      const response = await ctx.api().post('/reprocessamento').set(editar()).send(corpo);
      expect({
        corpo,
        status: response.status,
        caminhos: response.body.erros.map((e: { caminho: string }) => e.caminho),
      }).toEqual({
        corpo,
        status: 422,
        caminhos: expect.arrayContaining([caminho]),
      });
    }
    expect(await ctx.hub.db.solicitacaoDeReprocessamento.count()).toBe(antes);
  });
});

describe('GET and DELETE /reprocessamento', () => {
  test('When requests are listed, then newest first in a page; an unknown id is 404', async () => {
    const primeiro = await solicitar({ entrega_ids: [uuidv7()] });
    const segundo = await solicitar({ entrega_ids: [uuidv7()] });
    const response = await ctx.api().get('/reprocessamento?tamanho=2').set(ler());
    expectPagina(response.body, 1, 2);
    expect(response.body.itens.map((s) => s.id)).toEqual([segundo.id, primeiro.id]);
    expect(response.body.total).toBe(await ctx.hub.db.solicitacaoDeReprocessamento.count());
    expect((await ctx.api().get(`/reprocessamento/${uuidv7()}`).set(ler())).status).toBe(404);
  });

  test('When a pendente request is cancelled, then 204 and it is cancelada and never runs; cancelling it again or a concluded one is 409', async () => {
    const [entrega] = (await naFilaDeErro(cenario, 1)) as [string];
    // Made as POST would, but without waking the runner, so it is still pendente when cancelled
    // (once the run an earlier test woke is over: a run takes every open request it finds).
    await ctx.hub.reprocessamento.idle();
    const agora = new Date();
    const id = uuidv7();
    await ctx.hub.db.solicitacaoDeReprocessamento.create({
      data: {
        id,
        situacao: 'pendente',
        entregaIds: [entrega],
        quantidadeDeEntregas: 1,
        criadaEm: agora,
        atualizadaEm: agora,
      },
    });
    const cancelar = await ctx.api().delete(`/reprocessamento/${id}`).set(editar());
    expect(cancelar.status).toBe(204);
    const lida = await ctx.api().get(`/reprocessamento/${id}`).set(ler());
    expect(lida.body).toMatchObject({ situacao: 'cancelada', concluida_em: expect.stringMatching(ISO_MS) });

    const depois = await solicitar({ entrega_ids: [uuidv7()] });
    await concluida(depois.id);
    expect((await situacoes([entrega]))[0]!.situacao).toBe('fila_de_erro');
    for (const alvo of [id, depois.id]) {
      const again = await ctx.api().delete(`/reprocessamento/${alvo}`).set(editar());
      expect({ status: again.status, codigo: again.body.codigo }).toEqual({
        status: 409,
        codigo: 'reprocessamento_nao_pendente',
      });
    }
    expect((await ctx.api().delete(`/reprocessamento/${uuidv7()}`).set(editar())).status).toBe(404);
  });
});
