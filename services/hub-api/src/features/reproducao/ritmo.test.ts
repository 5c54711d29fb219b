import { waitFor } from '@hub/testing';
import { auth } from '../../contexto.test-support';
import { type Cenario, criarCenario } from '../eventos/linhas.test-support';
import { type ContextoComFila, iniciarContextoComFila } from '../fila/fila-de-erro.test-support';
import type { ReproducaoDto } from './reproducao.schemas';
import { entregasDe, guardarEventos, reproduzir } from './reproducao.test-support';

// Batches of 2, and the next batch only once none of the last one is still in the queue: with no
// worker here, the test plays the worker by concluding deliveries. Two replays per application and minute.
let ctx: ContextoComFila;
beforeAll(async () => {
  ctx = await iniciarContextoComFila({
    HUB_REPRODUCAO_LOTE: '2',
    HUB_REPRODUCAO_EM_FILA: '0',
    HUB_REPRODUCAO_PAUSA: '0ms',
    HUB_REPRODUCAO_INTERVALO: '50ms',
    HUB_REPRODUCOES_POR_MINUTO: '2',
  });
}, 60_000);
afterAll(() => ctx?.encerrar());

const inicio = new Date('2024-07-01T00:00:00.000Z');
const faixa = { desde: inicio.toISOString(), ate: new Date(inicio.getTime() + 60_000).toISOString() };
const ler = async (id: string) =>
  (await ctx.api().get(`/reproducao/${id}`).set(auth(ctx.leitor))).body as ReproducaoDto;
const ate = (id: string, condicao: (r: ReproducaoDto) => boolean, what: string) =>
  waitFor(
    async () => {
      const r = await ler(id);
      return condicao(r) ? r : undefined;
    },
    { what },
  );
/** Plays the worker: every delivery of the subscription still in the queue is concluded. */
const concluirTodas = (assinaturaId: string) =>
  ctx.hub.db.entrega.updateMany({
    where: { assinaturaId, situacao: 'pendente' },
    data: { situacao: 'concluida', quantidadeDeTentativas: 1, tentativasNoCicloAtual: 1, entregueEm: new Date() },
  });
/** The replay does not move past `criadas` for a second (its runner ticks every 50 ms meanwhile). */
const parada = async (id: string, criadas: number) =>
  expect(waitFor(async () => (await ler(id)).criadas !== criadas, { what: 'a move', timeoutMs: 1000 })).rejects.toThrow(
    /timed out/,
  );

describe('pace: a replay goes at its destination’s pace', () => {
  let c: Cenario;
  beforeAll(async () => {
    c = await criarCenario(ctx);
    await guardarEventos(ctx.hub.db, c, 5, inicio);
  });

  test('When its last batch is still in the queue, then the next waits; as the destination takes them, it goes on, counters per batch, to the end', async () => {
    const r = await reproduzir(ctx, c.assinaturaId, faixa);
    expect(await ate(r.id, (x) => x.criadas === 2, 'the first batch')).toMatchObject({ situacao: 'em_andamento' });
    await parada(r.id, 2);
    expect(await entregasDe(ctx.hub.db, c.assinaturaId)).toHaveLength(2);
    await concluirTodas(c.assinaturaId);
    await ate(r.id, (x) => x.criadas === 4, 'the second batch');
    await parada(r.id, 4);
    await concluirTodas(c.assinaturaId);
    expect(await ate(r.id, (x) => x.situacao === 'concluida', 'the end')).toMatchObject({ criadas: 5, ignoradas: 0 });
    expect(await entregasDe(ctx.hub.db, c.assinaturaId)).toHaveLength(5);
  });
});

describe('cancelling a replay under way', () => {
  test('When cancelled between batches, then 200 cancelada, and no batch follows though its destination is free again', async () => {
    const c = await criarCenario(ctx);
    await guardarEventos(ctx.hub.db, c, 5, inicio);
    const r = await reproduzir(ctx, c.assinaturaId, faixa);
    await ate(r.id, (x) => x.criadas === 2, 'the first batch');
    const response = await ctx.api().post(`/reproducao/${r.id}/cancelar`).set(auth(ctx.todas));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: r.id, situacao: 'cancelada', criadas: 2 });
    expect(response.body.concluida_em).not.toBeNull();
    await concluirTodas(c.assinaturaId);
    await parada(r.id, 2);
    expect(await entregasDe(ctx.hub.db, c.assinaturaId)).toHaveLength(2);
    const outra = await ctx.api().post(`/reproducao/${r.id}/cancelar`).set(auth(ctx.todas));
    expect([outra.status, outra.body.codigo]).toEqual([409, 'reproducao_encerrada']);
  });

  test('When the subscription is switched off mid-replay, then the replay ends cancelada at its next batch', async () => {
    const c = await criarCenario(ctx);
    await guardarEventos(ctx.hub.db, c, 5, inicio);
    const r = await reproduzir(ctx, c.assinaturaId, faixa);
    await ate(r.id, (x) => x.criadas === 2, 'the first batch');
    await ctx.api().patch(`/assinatura/${c.assinaturaId}`).set(auth(ctx.todas)).send({ ativa: false });
    await concluirTodas(c.assinaturaId);
    expect(await ate(r.id, (x) => x.situacao !== 'em_andamento', 'the end')).toMatchObject({
      situacao: 'cancelada',
      criadas: 2,
    });
  });
});

describe('the applications’ budget of replays', () => {
  test('When an application asks for more than HUB_REPRODUCOES_POR_MINUTO replays in a minute, then 429 muitas_requisicoes with Retry-After, nothing stored; another application and the panel are not held', async () => {
    const c = await criarCenario(ctx);
    const d = await criarCenario(ctx);
    const token = async (x: Cenario) =>
      ctx.identity.appToken(
        (await ctx.api().get(`/aplicativo/${x.assinanteId}`).set(auth(ctx.todas))).body.client_id as string,
      );
    const [tc, td] = [await token(c), await token(d)];
    const pedir = (t: string, x: Cenario) =>
      ctx.api().post(`/assinaturas/${x.assinaturaId}/reproduzir`).set(auth(t)).send(faixa);
    expect((await pedir(tc, c)).status).toBe(202);
    expect((await pedir(tc, c)).status).toBe(202);
    const antes = await ctx.hub.db.reproducao.count();
    const recusada = await pedir(tc, c);
    expect([recusada.status, recusada.body.codigo]).toEqual([429, 'muitas_requisicoes']);
    expect(Number(recusada.headers['retry-after'])).toBeGreaterThan(0);
    expect(recusada.body.detail).toContain('2 replays per minute');
    expect(await ctx.hub.db.reproducao.count()).toBe(antes);
    expect((await pedir(td, d)).status).toBe(202);
    expect((await reproduzir(ctx, c.assinaturaId, faixa)).assinatura_id).toBe(c.assinaturaId);
  });
});
