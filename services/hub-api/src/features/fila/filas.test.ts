import { delayQueueName, QUEUES } from '@hub/contracts';
import { auth } from '../../test-support';
import { type Cenario, criarCenario, gravarEvento } from '../eventos/linhas.test-support';
import { type ContextoComFila, iniciarContextoComFila, porNaFilaDeErro } from './fila-de-erro.test-support';

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
    { nome: QUEUES.entregas, papel: 'trabalho', mensagens: expect.any(Number), consumidores: 0, declarada: true },
    // hub-api declares no delay queue: the workers do, with their steps.
    { nome: delayQueueName(30), papel: 'atraso', mensagens: 0, consumidores: 0, declarada: false },
    { nome: delayQueueName(60), papel: 'atraso', mensagens: 0, consumidores: 0, declarada: false },
    { nome: QUEUES.entregasErro, papel: 'erro', mensagens: 2, consumidores: 0, declarada: true },
  ]);
});

test('When one queue is asked by name, then it comes alone; a name outside the topology is 404', async () => {
  const erro = await ctx.api().get(`/fila/${QUEUES.entregasErro}`).set(ler());
  expect(erro.status).toBe(200);
  expect(erro.body).toMatchObject({ nome: QUEUES.entregasErro, papel: 'erro', declarada: true });
  for (const nome of ['access.colaboradores.v2', 'nao-existe', `${QUEUES.entregas}x`]) {
    const response = await ctx.api().get(`/fila/${nome}`).set(ler());
    expect({ nome, status: response.status }).toEqual({ nome, status: 404 });
  }
});

test('When the queues are asked without a token or without monitoramento, then 401 and 403', async () => {
  expect((await ctx.api().get('/fila')).status).toBe(401);
  expect((await ctx.api().get('/fila').set(auth(ctx.semMonitoramento))).status).toBe(403);
  expect((await ctx.api().get(`/fila/${QUEUES.entregas}`).set(auth(ctx.semMonitoramento))).status).toBe(403);
});
