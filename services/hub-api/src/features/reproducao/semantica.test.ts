import { auth, criarVersao } from '../../contexto.test-support';
import { type Cenario, criarCenario } from '../eventos/linhas.test-support';
import { type ContextoComFila, iniciarContextoComFila, jobsNaOutbox } from '../fila/fila-de-erro.test-support';
import { observarTrabalhos } from '../publicacao/trabalhos.test-support';
import {
  aoFim,
  entregasDe,
  guardarEvento,
  guardarEventos,
  outraAssinatura,
  reproduzir,
} from './reproducao.test-support';

// Batches of 2 events: every replay below takes several transactions.
let ctx: ContextoComFila;
let publicados: Awaited<ReturnType<typeof observarTrabalhos>>;
beforeAll(async () => {
  ctx = await iniciarContextoComFila({
    HUB_REPRODUCAO_LOTE: '2',
    HUB_REPRODUCAO_EM_FILA: '1000',
    HUB_REPRODUCAO_PAUSA: '0ms',
  });
  publicados = await observarTrabalhos(ctx.hub);
}, 60_000);
afterAll(() => ctx?.encerrar());

const inicio = new Date('2024-05-01T12:00:00.000Z');
const ms = (d: Date, delta: number) => new Date(d.getTime() + delta);

describe('which events a replay takes', () => {
  let c: Cenario;
  beforeAll(async () => {
    c = await criarCenario(ctx);
  });

  test('When events lie at both ends of [desde, ate], just outside, of another version or another type, then only the ones inside get a delivery', async () => {
    const fim = ms(inicio, 60_000);
    const dentro = [
      await guardarEvento(ctx.hub.db, c, { recebidoEm: inicio }),
      await guardarEvento(ctx.hub.db, c, { recebidoEm: ms(inicio, 30_000) }),
      await guardarEvento(ctx.hub.db, c, { recebidoEm: fim }),
    ];
    await guardarEvento(ctx.hub.db, c, { recebidoEm: ms(inicio, -1) });
    await guardarEvento(ctx.hub.db, c, { recebidoEm: ms(fim, 1) });
    expect((await criarVersao(ctx, c.tipoId)).versao).toBe(2);
    await guardarEvento(ctx.hub.db, c, { recebidoEm: ms(inicio, 20), versao: 2 });
    const outro = await criarCenario(ctx);
    await guardarEvento(ctx.hub.db, outro, { recebidoEm: ms(inicio, 10) });
    // In another offset: the same instants.
    const r = await reproduzir(ctx, c.assinaturaId, { desde: '2024-05-01T09:00:00-03:00', ate: fim.toISOString() });
    expect(r.quantidade_de_eventos).toBe(3);
    expect(await aoFim(ctx, r.id)).toMatchObject({ situacao: 'concluida', criadas: 3, ignoradas: 0, reenviadas: 0 });
    const entregas = await entregasDe(ctx.hub.db, c.assinaturaId);
    expect(entregas.map((e) => e.eventoId)).toEqual(dentro);
    expect(entregas.every((e) => e.situacao === 'pendente' && e.tentativasNoCicloAtual === 0)).toBe(true);
    expect(await entregasDe(ctx.hub.db, outro.assinaturaId)).toEqual([]);
  });

  test('When asked again, then nothing is created the second time: every event is ignored', async () => {
    const antes = await entregasDe(ctx.hub.db, c.assinaturaId);
    const r = await reproduzir(ctx, c.assinaturaId, {
      desde: inicio.toISOString(),
      ate: ms(inicio, 60_000).toISOString(),
    });
    expect(await aoFim(ctx, r.id)).toMatchObject({ criadas: 0, reenviadas: 0, ignoradas: 3 });
    expect(await entregasDe(ctx.hub.db, c.assinaturaId)).toEqual(antes);
  });

  test('When the subscription’s filter changed after the events were stored, then the current filter chooses', async () => {
    const d = await criarCenario(ctx);
    const t = ms(inicio, 3_600_000);
    const grande = await guardarEvento(ctx.hub.db, d, { recebidoEm: t, dados: { numero: 'G', valor: 500 } });
    await guardarEvento(ctx.hub.db, d, { recebidoEm: ms(t, 1), dados: { numero: 'P', valor: 5 } });
    const patch = await ctx
      .api()
      .patch(`/assinatura/${d.assinaturaId}`)
      .set(auth(ctx.todas))
      .send({ filtro: { 'dados.valor': { $gte: 100 } } });
    expect(patch.status).toBe(200);
    const r = await reproduzir(ctx, d.assinaturaId, { desde: t.toISOString(), ate: ms(t, 1).toISOString() });
    expect(await aoFim(ctx, r.id)).toMatchObject({ quantidade_de_eventos: 2, criadas: 1, ignoradas: 1 });
    expect((await entregasDe(ctx.hub.db, d.assinaturaId)).map((e) => e.eventoId)).toEqual([grande]);
  });

  test('When an event was erased by retention before the replay, then it is simply not there', async () => {
    const d = await criarCenario(ctx);
    const [fica, apagado] = await guardarEventos(ctx.hub.db, d, 2, inicio);
    await ctx.hub.db.evento.delete({ where: { id: apagado! } });
    const r = await reproduzir(ctx, d.assinaturaId, {
      desde: inicio.toISOString(),
      ate: ms(inicio, 5000).toISOString(),
    });
    expect(await aoFim(ctx, r.id)).toMatchObject({ quantidade_de_eventos: 1, criadas: 1 });
    expect((await entregasDe(ctx.hub.db, d.assinaturaId)).map((e) => e.eventoId)).toEqual([fica]);
  });
});

describe('what a replayed delivery is', () => {
  test('When an event published to one subscription is replayed to a newer one, then its job has the same body (its own assinatura_id), through the outbox', async () => {
    const c = await criarCenario(ctx);
    const publicado = await ctx
      .api()
      .post('/evento')
      .set(auth(ctx.todas))
      .send({
        tipo_de_evento_id: c.tipoId,
        versao_do_esquema: 1,
        entidade_id: 'pedido-7',
        dados: { numero: '7', valor: 70 },
      });
    expect(publicado.status).toBe(201);
    const original = (await publicados.trabalhos([publicado.body.entregas[0].id])).get(
      publicado.body.entregas[0].id,
    )![0]!;
    const nova = await outraAssinatura(ctx, c);
    const r = await reproduzir(ctx, nova, { desde: publicado.body.recebido_em, ate: publicado.body.recebido_em });
    expect(await aoFim(ctx, r.id)).toMatchObject({ criadas: 1 });
    const [entrega] = await entregasDe(ctx.hub.db, nova);
    expect((await jobsNaOutbox(ctx.hub.db, [entrega!.id])).get(entrega!.id)).toBe(1);
    const job = (await publicados.trabalhos([entrega!.id])).get(entrega!.id)![0]!;
    expect(job.corpo).toBe(original.corpo.replace(`"assinatura_id":"${c.assinaturaId}"`, `"assinatura_id":"${nova}"`));
    expect(job).toMatchObject({
      evento_id: publicado.body.id,
      assinatura_id: nova,
      url_de_destino: entrega!.urlDeDestino,
    });
  });

  test('When incluir_entregues is true, then a concluded delivery starts a new cycle with the same id (webhook-id), and one still in the queue is left alone', async () => {
    const c = await criarCenario(ctx);
    const [a, b] = await guardarEventos(ctx.hub.db, c, 2, inicio);
    const r1 = await reproduzir(ctx, c.assinaturaId, {
      desde: inicio.toISOString(),
      ate: ms(inicio, 1000).toISOString(),
    });
    await aoFim(ctx, r1.id);
    const [ea, eb] = await entregasDe(ctx.hub.db, c.assinaturaId);
    await ctx.hub.db.entrega.update({
      where: { id: ea!.id },
      data: { situacao: 'concluida', quantidadeDeTentativas: 1, tentativasNoCicloAtual: 1, entregueEm: new Date() },
    });
    const r2 = await reproduzir(ctx, c.assinaturaId, {
      desde: inicio.toISOString(),
      ate: ms(inicio, 1000).toISOString(),
      incluir_entregues: true,
    });
    expect(r2.incluir_entregues).toBe(true);
    expect(await aoFim(ctx, r2.id)).toMatchObject({ criadas: 0, reenviadas: 1, ignoradas: 1 });
    const depois = await entregasDe(ctx.hub.db, c.assinaturaId);
    expect(
      depois.map((e) => [e.id, e.eventoId, e.situacao, e.quantidadeDeTentativas, e.tentativasNoCicloAtual]),
    ).toEqual([
      [ea!.id, a, 'pendente', 1, 0],
      [eb!.id, b, 'pendente', 0, 0],
    ]);
    expect((await jobsNaOutbox(ctx.hub.db, [ea!.id, eb!.id])).get(ea!.id)).toBe(2);
    expect((await jobsNaOutbox(ctx.hub.db, [eb!.id])).get(eb!.id)).toBe(1);
  });
});

describe('an ordered subscription', () => {
  test('When one entity’s events are replayed, then their deliveries follow recebido_em, numbered after the chain’s last sequencia; only the first goes now', async () => {
    const c = await criarCenario(ctx);
    await ctx.api().patch(`/assinatura/${c.assinaturaId}`).set(auth(ctx.todas)).send({ entrega_ordenada: true });
    // The chain already holds 4 (the live deliveries of earlier publications), all concluded.
    await ctx.hub.db.sequenciaDeEntidade.create({
      data: { assinaturaId: c.assinaturaId, entidadeId: 'pedido-o', ultima: 4n, pronta: 5n },
    });
    // Stored out of order of receipt: the replay goes by recebido_em, not by insertion.
    const tarde = await guardarEvento(ctx.hub.db, c, { recebidoEm: ms(inicio, 2000), entidadeId: 'pedido-o' });
    const cedo = await guardarEvento(ctx.hub.db, c, { recebidoEm: inicio, entidadeId: 'pedido-o' });
    const meio = await guardarEvento(ctx.hub.db, c, { recebidoEm: ms(inicio, 1000), entidadeId: 'pedido-o' });
    const r = await reproduzir(ctx, c.assinaturaId, {
      desde: inicio.toISOString(),
      ate: ms(inicio, 2000).toISOString(),
    });
    expect(await aoFim(ctx, r.id)).toMatchObject({ criadas: 3 });
    const entregas = await entregasDe(ctx.hub.db, c.assinaturaId);
    expect(entregas.map((e) => [e.eventoId, e.sequencia, e.emEspera])).toEqual([
      [cedo, 5n, false],
      [meio, 6n, true],
      [tarde, 7n, true],
    ]);
    const jobs = await jobsNaOutbox(
      ctx.hub.db,
      entregas.map((e) => e.id),
    );
    expect(entregas.map((e) => jobs.get(e.id) ?? 0)).toEqual([1, 0, 0]);
    const job = (await publicados.trabalhos([entregas[0]!.id])).get(entregas[0]!.id)![0]!;
    expect(job.corpo).toContain(`"assinatura_id":"${c.assinaturaId}","sequencia":5,`);
    const cadeia = await ctx.hub.db.sequenciaDeEntidade.findUniqueOrThrow({
      where: { assinaturaId_entidadeId: { assinaturaId: c.assinaturaId, entidadeId: 'pedido-o' } },
    });
    expect([cadeia.ultima, cadeia.pronta]).toEqual([7n, 5n]);
  });
});
