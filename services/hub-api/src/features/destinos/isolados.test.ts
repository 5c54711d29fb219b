import { DELIVERY_TOPOLOGY, declareDestinationQueue, EXCHANGES, QUEUES, trabalhoDeEntrega } from '@hub/contracts';
import { outboxInsert } from '@hub/outbox';
import { waitFor } from '@hub/testing';
import { auth } from '../../contexto.test-support';
import { type Cenario, criarCenario } from '../eventos/linhas.test-support';
import { type ContextoComFila, iniciarContextoComFila } from '../fila/fila-de-erro.test-support';

/**
 * hub-api's part of fair scheduling (architecture §5): publication (right after its commit, and the
 * outbox relay for a job the broker did not confirm, both through DestinosIsolados) sends a new job
 * of an isolated destination straight to that destination's queue, falls back to the shared work
 * queue when that queue is gone, and operators see the queue in GET /fila and GET /destino. A virtual host
 * of this file's own: the depths counted are this file's jobs only (no worker consumes them).
 */
let ctx: ContextoComFila;
let cenario: Cenario;
let destinoId: string;
const ORIGEM = 'https://recebedor.example';
const fila = () => DELIVERY_TOPOLOGY.filaDoDestino(destinoId);

beforeAll(async () => {
  ctx = await iniciarContextoComFila();
  cenario = await criarCenario(ctx);
  destinoId = (await ctx.hub.db.destino.findUniqueOrThrow({ where: { origem: ORIGEM } })).id;
}, 60_000);
afterAll(async () => {
  await ctx?.hub.broker.withChannel((ch) => ch.deleteQueue(fila())).catch(() => undefined);
  await ctx?.encerrar();
});

const ler = () => auth(ctx.leitor);
const profundidade = (nome: string) =>
  ctx.hub.broker
    .withChannel((ch) => ch.checkQueue(nome))
    .then((q) => q.messageCount)
    .catch(() => undefined);

/** An event published through POST /evento: its one delivery (the scenario has one subscription). */
async function publicar(): Promise<string> {
  const response = await ctx
    .api()
    .post('/evento')
    .set({ ...auth(ctx.todas), 'content-type': 'application/json' })
    .send({
      tipo_de_evento_id: cenario.tipoId,
      versao_do_esquema: 1,
      entidade_id: 'pedido-1',
      dados: { numero: '1', valor: 10 },
    });
  if (response.status !== 201) throw new Error(`POST /evento answered ${response.status}: ${response.text}`);
  return (response.body as { entregas: { id: string }[] }).entregas[0]!.id;
}

/** What a worker does when it isolates a destination: the row first, then its queue. */
async function isolar(): Promise<void> {
  await ctx.hub.db.$executeRaw`
    update destino set isolamento = 'isolada', isolamento_desde = now(), isolamento_motivo = 'retida'
     where id = ${destinoId}::uuid`;
  await ctx.hub.broker.withChannel((ch) => declareDestinationQueue(ch, destinoId));
  // The change is announced at commit: the relay's set has it within moments.
  await waitFor(() => ctx.hub.isolados.quantos() === 1, { what: 'the relay hearing of the isolation' });
}

test('When a destination is isolated, then publication sends its new jobs straight to its queue, none to the shared work queue', async () => {
  await isolar();
  const compartilhada = await profundidade(QUEUES.entregas);
  const id = await publicar();
  await waitFor(async () => (await profundidade(fila())) === 1, { what: 'the job in the destination queue' });
  expect(await profundidade(QUEUES.entregas)).toBe(compartilhada);
  const mensagem = await ctx.hub.broker.withChannel(async (ch) => {
    const m = await ch.get(fila());
    if (m) ch.nack(m, false, true);
    return m;
  });
  expect(mensagem ? mensagem.properties.messageId : undefined).toBe(id);
});

test('When a job of an isolated destination is in the outbox (its confirm did not come), then the relay publishes it to that queue too', async () => {
  const antes = (await profundidade(fila())) ?? 0;
  const compartilhada = await profundidade(QUEUES.entregas);
  const id = crypto.randomUUID();
  const { text, values } = outboxInsert([
    {
      exchange: EXCHANGES.entregas,
      routingKey: trabalhoDeEntrega.routingKey,
      messageId: id,
      body: { entrega_id: id, url_de_destino: `${ORIGEM}/ganchos` },
    },
  ]);
  await ctx.hub.db.$executeRawUnsafe(text, ...values);
  await waitFor(
    async () =>
      (
        await ctx.hub.db.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from outbox where message_id = ${id} and publicado_em is not null`
      )[0]!.n === 1,
    { what: 'the row published by the relay' },
  );
  await waitFor(async () => (await profundidade(fila())) === antes + 1, { what: 'the job in the destination queue' });
  expect(await profundidade(QUEUES.entregas)).toBe(compartilhada);
});

test('When an isolated destination is listed, then GET /fila shows its queue (papel destino, its origin) and GET /destino its isolation; its messages are not looked into', async () => {
  const lista = await ctx.api().get('/fila').set(ler());
  expect(lista.status).toBe(200);
  expect(lista.body).toContainEqual({
    nome: fila(),
    papel: 'destino',
    origem: ORIGEM,
    mensagens: expect.any(Number),
    consumidores: 0,
    declarada: true,
  });
  expect(lista.body).toContainEqual(expect.objectContaining({ nome: QUEUES.entregas, origem: null }));
  const uma = await ctx.api().get(`/fila/${fila()}`).set(ler());
  expect(uma.body).toMatchObject({ nome: fila(), papel: 'destino', origem: ORIGEM });
  expect((await ctx.api().get(`/fila/${fila()}/mensagens`).set(ler())).status).toBe(409);
  const destino = await ctx.api().get(`/destino/${destinoId}`).set(ler());
  expect(destino.body.isolamento).toEqual({
    situacao: 'isolada',
    motivo: 'retida',
    desde: expect.any(String),
    fila: fila(),
  });
});

test('When the queue of a destination hub-api still takes as isolated is gone, then its job is returned and published to the shared work queue', async () => {
  // As between a removal's unbinding and the relay hearing of it: the set still says isolated.
  await ctx.hub.broker.withChannel((ch) => ch.deleteQueue(fila()));
  expect(ctx.hub.isolados.quantos()).toBe(1);
  const compartilhada = (await profundidade(QUEUES.entregas)) ?? 0;
  await publicar();
  await waitFor(async () => (await profundidade(QUEUES.entregas)) === compartilhada + 1, {
    what: 'the job in the shared work queue',
  });
  expect(await profundidade(fila())).toBeUndefined();
});

test('When the destination is back in the shared queue, then the relay routes it there, GET /fila no longer lists its queue and GET /destino says null', async () => {
  await ctx.hub.db.$executeRaw`
    update destino set isolamento = null, isolamento_desde = now(), isolamento_motivo = null
     where id = ${destinoId}::uuid`;
  await waitFor(() => ctx.hub.isolados.quantos() === 0, { what: 'the relay hearing of the return' });
  const lista = await ctx.api().get('/fila').set(ler());
  expect((lista.body as { papel: string }[]).filter((f) => f.papel === 'destino')).toEqual([]);
  expect((await ctx.api().get(`/fila/${fila()}`).set(ler())).status).toBe(404);
  expect((await ctx.api().get(`/destino/${destinoId}`).set(ler())).body.isolamento).toBeNull();
});
