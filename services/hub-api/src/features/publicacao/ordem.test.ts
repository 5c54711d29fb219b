import { waitFor } from '@hub/testing';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { assinar, cenario, publicar } from './cenario.test-support';
import { observarTrabalhos } from './trabalhos.test-support';

// Ordered delivery per entity at publication (docs/decisions/ordered-delivery-per-entity.md): the
// subscription's flag, the sequencia each delivery gets in publication's one statement, and which
// deliveries' jobs go at once (the first of an idle entity) and which wait (em_espera, no job).

let ctx: Contexto;
let publicados: Awaited<ReturnType<typeof observarTrabalhos>>;
beforeAll(async () => {
  ctx = await iniciarContexto();
  publicados = await observarTrabalhos(ctx.hub);
});
afterAll(() => encerrarContexto(ctx));

interface Entrega {
  id: string;
  assinatura_id: string;
  entidade_id: string;
  sequencia: number | null;
  situacao: string;
}

/** The deliveries of the events published, each with its row's em_espera. */
async function entregasDe(eventoIds: string[]) {
  const linhas = await ctx.hub.db.entrega.findMany({
    where: { eventoId: { in: eventoIds } },
    select: { id: true, eventoId: true, emEspera: true },
  });
  const emEspera = new Map(linhas.map((l) => [l.id, l.emEspera]));
  const entregas: (Entrega & { evento_id: string; em_espera: boolean })[] = [];
  for (const l of linhas) {
    const resposta = await ctx.api().get(`/entrega/${l.id}`).set(auth(ctx.leitor));
    expect(resposta.status).toBe(200);
    entregas.push({ ...(resposta.body as Entrega), evento_id: l.eventoId, em_espera: emEspera.get(l.id)! });
  }
  return entregas;
}

test('When a subscription is created, changed and read, then entrega_ordenada is false unless asked, and anything but a boolean is refused', async () => {
  const c = await cenario(ctx);
  const semOrdem = await assinar(ctx, c.tipo.id);
  expect((await ctx.api().get(`/assinatura/${semOrdem.id}`).set(auth(ctx.leitor))).body.entrega_ordenada).toBe(false);
  const ordenada = await assinar(ctx, c.tipo.id, 1, { entrega_ordenada: true });
  expect((await ctx.api().get(`/assinatura/${ordenada.id}`).set(auth(ctx.leitor))).body.entrega_ordenada).toBe(true);

  const mudada = await ctx
    .api()
    .patch(`/assinatura/${semOrdem.id}`)
    .set(auth(ctx.todas))
    .send({ entrega_ordenada: true });
  expect(mudada.status).toBe(200);
  expect(mudada.body.entrega_ordenada).toBe(true);
  const lista = await ctx.api().get('/assinatura').query({ tipo_de_evento_id: c.tipo.id }).set(auth(ctx.leitor));
  expect(lista.body.itens.map((a: { entrega_ordenada: boolean }) => a.entrega_ordenada)).toEqual([true, true]);

  for (const valor of ['sim', 1, null])
    for (const [metodo, caminho] of [
      ['patch', `/assinatura/${semOrdem.id}`],
      ['post', '/assinatura'],
    ] as const) {
      const corpo =
        metodo === 'post'
          ? {
              aplicativo_assinante_id: ordenada.aplicativo_assinante_id,
              tipo_de_evento_id: c.tipo.id,
              versao_do_esquema: 1,
              url_de_destino: 'https://recebedor.example/x',
              entrega_ordenada: valor,
            }
          : { entrega_ordenada: valor };
      // PATCH takes null as "unchanged", as for its other fields.
      if (metodo === 'patch' && valor === null) continue;
      const resposta = await ctx.api()[metodo](caminho).set(auth(ctx.todas)).send(corpo);
      expect({
        metodo,
        valor,
        status: resposta.status,
        codigo: resposta.body.codigo,
        caminhos: resposta.body.erros?.map((e: { caminho: string }) => e.caminho),
      }).toEqual({ metodo, valor, status: 422, codigo: 'dados_invalidos', caminhos: ['/entrega_ordenada'] });
    }
  expect((await ctx.api().get(`/assinatura/${semOrdem.id}`).set(auth(ctx.leitor))).body.entrega_ordenada).toBe(true);
});

test('When events of three entities are published one by one and many at once, then each ordered delivery gets 1, 2, 3… per entity, only the first of each entity is sent, and the unordered ones carry no sequencia', async () => {
  const c = await cenario(ctx);
  const ordenada = await assinar(ctx, c.tipo.id, 1, { entrega_ordenada: true });
  const livre = await assinar(ctx, c.tipo.id);
  const eventos: { id: string; entidade: string; ordem: number }[] = [];
  // One by one: acceptance order is the order of the answers.
  for (let i = 0; i < 3; i += 1) {
    const r = await publicar(
      ctx,
      c.tokenDoDono,
      c.corpo({ entidade_id: 'pedido-a', dados: { numero: `a${i}`, valor: i } }),
    );
    expect(r.status).toBe(201);
    eventos.push({ id: r.body.id, entidade: 'pedido-a', ordem: i });
  }
  // Many at once: the group commit writes several events of one entity in one statement.
  const juntos = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      publicar(
        ctx,
        c.tokenDoDono,
        c.corpo({ entidade_id: i % 2 ? 'pedido-b' : 'pedido-c', dados: { numero: `x${i}`, valor: i } }),
      ),
    ),
  );
  for (const r of juntos) {
    expect(r.status).toBe(201);
    eventos.push({ id: r.body.id, entidade: r.body.entidade_id, ordem: -1 });
  }
  const entregas = await entregasDe(eventos.map((e) => e.id));
  expect(entregas).toHaveLength(66);

  // Unordered: no sequencia, nothing waits, every job sent, its body without sequencia.
  const livres = entregas.filter((e) => e.assinatura_id === livre.id);
  expect(livres.every((e) => e.sequencia === null && !e.em_espera)).toBe(true);
  const trabalhosLivres = await publicados.trabalhos(livres.map((e) => e.id));
  for (const [, [t]] of trabalhosLivres) expect(JSON.parse(t!.corpo)).not.toHaveProperty('sequencia');

  // Ordered: 1..n per entity, gap-free, in the order of acceptance for the ones published one by one.
  const ordenadas = entregas.filter((e) => e.assinatura_id === ordenada.id);
  for (const [entidade, n] of [
    ['pedido-a', 3],
    ['pedido-b', 15],
    ['pedido-c', 15],
  ] as const) {
    const daEntidade = ordenadas.filter((e) => e.entidade_id === entidade);
    expect(daEntidade.map((e) => e.sequencia).sort((x, y) => x! - y!)).toEqual(
      Array.from({ length: n }, (_, i) => i + 1),
    );
    // The first goes at once, every later one waits for it.
    expect(daEntidade.filter((e) => !e.em_espera).map((e) => e.sequencia)).toEqual([1]);
  }
  const aPorEvento = new Map(
    ordenadas.filter((e) => e.entidade_id === 'pedido-a').map((e) => [e.evento_id, e.sequencia]),
  );
  expect(eventos.filter((e) => e.entidade === 'pedido-a').map((e) => aPorEvento.get(e.id))).toEqual([1, 2, 3]);

  // The first of each entity was sent, its body saying sequencia 1 (the rest have no job yet).
  const primeiras = ordenadas.filter((e) => e.sequencia === 1);
  const trabalhos = await publicados.trabalhos(primeiras.map((e) => e.id));
  for (const e of primeiras) {
    const corpo = JSON.parse(trabalhos.get(e.id)![0]!.corpo);
    expect({ sequencia: corpo.sequencia, assinatura_id: corpo.assinatura_id, entidade_id: corpo.entidade_id }).toEqual({
      sequencia: 1,
      assinatura_id: ordenada.id,
      entidade_id: e.entidade_id,
    });
  }
  // The chain's row: every sequencia assigned, the turn at the first.
  const cadeias = await ctx.hub.db.sequenciaDeEntidade.findMany({
    where: { assinaturaId: ordenada.id },
    orderBy: { entidadeId: 'asc' },
  });
  expect(cadeias.map((l) => [l.entidadeId, Number(l.ultima), Number(l.pronta)])).toEqual([
    ['pedido-a', 3, 1],
    ['pedido-b', 15, 1],
    ['pedido-c', 15, 1],
  ]);

  // The event's own read shows the same sequencia on its deliveries.
  const detalhe = await ctx.api().get(`/evento/${eventos[1]!.id}`).set(auth(ctx.leitor));
  expect(
    detalhe.body.entregas
      .map((e: Entrega) => [e.assinatura_id === ordenada.id ? 'ordenada' : 'livre', e.sequencia])
      .sort(),
  ).toEqual([
    ['livre', null],
    ['ordenada', 2],
  ]);
});

test('When an ordered delivery is resent or reprocessed, then its new job goes at once with its original sequencia', async () => {
  const c = await cenario(ctx);
  await assinar(ctx, c.tipo.id, 1, { entrega_ordenada: true });
  const eventoIds: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const r = await publicar(
      ctx,
      c.tokenDoDono,
      c.corpo({ entidade_id: 'pedido-r', dados: { numero: `r${i}`, valor: i } }),
    );
    eventoIds.push(r.body.id);
  }
  const porSequencia = new Map((await entregasDe(eventoIds)).map((e) => [e.sequencia, e.id]));
  const [primeira, segunda] = [porSequencia.get(1)!, porSequencia.get(2)!];
  // As the worker leaves them: the first in the error queue (its turn passed), the second in the error queue too.
  await ctx.hub.db.entrega.update({ where: { id: primeira }, data: { situacao: 'fila_de_erro' } });
  await ctx.hub.db.entrega.update({ where: { id: segunda }, data: { situacao: 'fila_de_erro', emEspera: false } });

  const reenvio = await ctx.api().post(`/entrega/${primeira}/reenviar`).set(auth(ctx.todas));
  expect(reenvio.status).toBe(202);
  expect({ situacao: reenvio.body.situacao, sequencia: reenvio.body.sequencia }).toEqual({
    situacao: 'pendente',
    sequencia: 1,
  });
  const pedido = await ctx
    .api()
    .post('/reprocessamento')
    .set(auth(ctx.todas))
    .send({ entrega_ids: [segunda] });
  expect(pedido.status).toBe(202);

  // Publication's job of the first, then the resend's; the second's only job is the reprocessing's.
  await waitFor(() => (publicados.recebidos.get(primeira)?.length ?? 0) >= 2 && publicados.recebidos.has(segunda), {
    what: 'the jobs of the resend and the reprocessing',
  });
  const sequenciaDe = (id: string) => publicados.recebidos.get(id)!.map((t) => JSON.parse(t.corpo).sequencia);
  expect(sequenciaDe(primeira)).toEqual([1, 1]);
  expect(sequenciaDe(segunda)).toEqual([2]);
  const linhas = await ctx.hub.db.entrega.findMany({ where: { id: { in: [primeira, segunda] } } });
  expect(linhas.map((l) => [l.situacao, l.emEspera])).toEqual([
    ['pendente', false],
    ['pendente', false],
  ]);
});
