import { DELIVERY_TOPOLOGY, delayQueueName, EXCHANGES, QUEUES } from '@hub/contracts';
import { waitFor } from '@hub/testing';
import { auth } from '../../contexto.test-support';
import { type Cenario, criarCenario, gravarEvento } from '../eventos/linhas.test-support';
import { type ContextoComFila, idsNaFila, iniciarContextoComFila, porNaFilaDeErro } from './fila-de-erro.test-support';

// A virtual host of its own: the depths counted here are this file's messages only.
let ctx: ContextoComFila;
let cenario: Cenario;
beforeAll(async () => {
  ctx = await iniciarContextoComFila({ DELIVERY_RETRY_DELAYS: '30ms,60ms,30ms' });
  cenario = await criarCenario(ctx);
}, 60_000);
afterAll(() => ctx?.encerrar());

const ler = () => auth(ctx.leitor);

test('When the queues are listed, then the work queue, one delay queue per distinct step and the error queue come with their depth and consumers', async () => {
  const { entregas } = await gravarEvento(ctx.hub.db, cenario, {
    recebidoEm: new Date(),
    entregas: ['fila_de_erro', 'fila_de_erro'],
  });
  await porNaFilaDeErro(ctx.hub, entregas);
  const response = await ctx.api().get('/fila').set(ler());
  expect(response.status).toBe(200);
  expect(response.body).toEqual([
    {
      nome: QUEUES.entregas,
      papel: 'trabalho',
      origem: null,
      mensagens: expect.any(Number),
      consumidores: 0,
      declarada: true,
    },
    // hub-api declares no delay queue: the workers do, with their steps.
    { nome: delayQueueName(30), papel: 'atraso', origem: null, mensagens: 0, consumidores: 0, declarada: false },
    { nome: delayQueueName(60), papel: 'atraso', origem: null, mensagens: 0, consumidores: 0, declarada: false },
    { nome: QUEUES.entregasErro, papel: 'erro', origem: null, mensagens: 2, consumidores: 0, declarada: true },
  ]);
});

test('When one queue is asked by name, then it comes alone; a name outside the topology is 404', async () => {
  const erro = await ctx.api().get(`/fila/${QUEUES.entregasErro}`).set(ler());
  expect(erro.status).toBe(200);
  expect(erro.body).toMatchObject({ nome: QUEUES.entregasErro, papel: 'erro', declarada: true });
  for (const nome of [
    'access.colaboradores.v2',
    'nao-existe',
    `${QUEUES.entregas}x`,
    // the queue of a destination that has none
    DELIVERY_TOPOLOGY.filaDoDestino('0190a3c1-0000-7000-8000-000000000000'),
  ]) {
    const response = await ctx.api().get(`/fila/${nome}`).set(ler());
    expect({ nome, status: response.status }).toEqual({ nome, status: 404 });
  }
});

test('When the queues are asked without a token or without monitoramento, then 401 and 403', async () => {
  expect((await ctx.api().get('/fila')).status).toBe(401);
  expect((await ctx.api().get('/fila').set(auth(ctx.semMonitoramento))).status).toBe(403);
  expect((await ctx.api().get(`/fila/${QUEUES.entregas}`).set(auth(ctx.semMonitoramento))).status).toBe(403);
});

const mensagens = (limite?: number) =>
  ctx
    .api()
    .get(`/fila/${QUEUES.entregasErro}/mensagens${limite === undefined ? '' : `?limite=${limite}`}`)
    .set(ler());

test('When the error queue is looked into, then its messages come with their delivery, why they are there and the delivery now, and the queue keeps every one', async () => {
  const { entregas } = await gravarEvento(ctx.hub.db, cenario, {
    recebidoEm: new Date(),
    entregas: ['fila_de_erro', 'fila_de_erro', 'fila_de_erro'],
  });
  await porNaFilaDeErro(ctx.hub, entregas, 4);
  await ctx.hub.broker.publish(EXCHANGES.entregasErro, '', Buffer.from('not a job'));
  const antes = await idsNaFila(ctx.hub);
  const total = antes.length + 1;

  const response = await mensagens(100);
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({ fila: QUEUES.entregasErro, mensagens_na_fila: total });
  expect(response.body.itens).toHaveLength(total);
  const nossas = response.body.itens.filter((m: { entrega_id: string }) => entregas.includes(m.entrega_id));
  expect(nossas).toHaveLength(3);
  for (const m of nossas)
    expect(m).toEqual({
      legivel: true,
      entrega_id: expect.any(String),
      evento_id: expect.any(String),
      assinatura_id: expect.any(String),
      url_de_destino: expect.stringMatching(/^https?:\/\//),
      tentativas: 4,
      ultimo_erro: 'HTTP 500',
      motivo: 'tentativas_esgotadas',
      situacao_da_entrega: 'fila_de_erro',
    });
  expect(response.body.itens.filter((m: { legivel: boolean }) => !m.legivel)).toEqual([
    expect.objectContaining({ legivel: false, entrega_id: null, tentativas: null, situacao_da_entrega: null }),
  ]);

  // Nothing was taken: the same deliveries, each once, and the unreadable message.
  expect(await idsNaFila(ctx.hub)).toEqual(antes);
  await todasDeVolta(total);
});

/**
 * GET /fila's count is RabbitMQ's ready messages: a quorum queue settles the messages a look took and
 * put back a moment after their channel has closed, and under load the count (and the next look) once
 * showed one fewer meanwhile (CI rehearsals). Waited for; a message lost would never come back.
 */
const todasDeVolta = (total: number) =>
  waitFor(async () => (await ctx.api().get(`/fila/${QUEUES.entregasErro}`).set(ler())).body.mensagens === total, {
    what: `GET /fila showing all ${total} messages of the error queue`,
  });

test('When the error queue is looked into with a limit, then at most that many come, and the next look shows the next ones', async () => {
  const total = (await ctx.api().get(`/fila/${QUEUES.entregasErro}`).set(ler())).body.mensagens as number;
  expect(total).toBeGreaterThanOrEqual(4);
  const primeira = await mensagens(2);
  const segunda = await mensagens(2);
  expect([primeira.status, segunda.status]).toEqual([200, 200]);
  expect(primeira.body.itens).toHaveLength(2);
  expect(segunda.body.itens).toHaveLength(2);
  const chave = (m: { entrega_id: string | null }) => m.entrega_id ?? 'ilegivel';
  const vistas = [...primeira.body.itens, ...segunda.body.itens].map(chave);
  expect(new Set(vistas).size).toBe(4);
  await todasDeVolta(total);
  // Without a limit, 20 at most; above 100, 100.
  expect((await mensagens()).body.itens.length).toBe(Math.min(total, 20));
  await todasDeVolta(total);
  expect((await mensagens(5000)).body.itens.length).toBe(Math.min(total, 100));
});

test('When the work queue or a queue outside the topology is looked into, then 409 fila_sem_inspecao and 404; a limit that is not a number is 400', async () => {
  const trabalho = await ctx.api().get(`/fila/${QUEUES.entregas}/mensagens`).set(ler());
  expect(trabalho.status).toBe(409);
  expect(trabalho.body).toMatchObject({ status: 409, codigo: 'fila_sem_inspecao' });
  expect(
    (
      await ctx
        .api()
        .get(`/fila/${delayQueueName(30)}/mensagens`)
        .set(ler())
    ).status,
  ).toBe(409);
  expect((await ctx.api().get('/fila/nao-existe/mensagens').set(ler())).status).toBe(404);
  expect((await ctx.api().get(`/fila/${QUEUES.entregasErro}/mensagens?limite=x`).set(ler())).status).toBe(400);
  expect((await ctx.api().get(`/fila/${QUEUES.entregasErro}/mensagens`).set(auth(ctx.semMonitoramento))).status).toBe(
    403,
  );
});
