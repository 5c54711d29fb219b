import { type Broker, retryQueueName } from '@hub/broker';
import { declareDeliveryTopology, trabalhoDeEntrega } from '@hub/contracts';
import { connectTestBroker, waitFor } from '@hub/testing';
import {
  cenario,
  createTestHub,
  deleteTestTopology,
  startDeliveryWorkerForTests,
  type TestDeliveryWorker,
  type TestHub,
} from './delivery-worker.test-support';
import { iniciarReceptor, type Receptor } from './receptor.test-support';

// A job waiting for its next attempt in the delay queue of the version before the one retry ladder
// (`delivery-worker.atraso.<ms>ms`, bound to `hub.entregas.atraso`): the new worker's start moves it
// into `hub.atraso` and removes the old queue and exchange, and the job is still delivered.
const PASSO_MS = 5_000;

let hub: TestHub;
let broker: Broker;
let worker: TestDeliveryWorker | undefined;
let receptor: Receptor;

beforeAll(async () => {
  hub = await createTestHub();
  broker = await connectTestBroker('escada-antiga');
  receptor = await iniciarReceptor({ '/ok': (_req, res) => res.writeHead(200).end('recebido') });
});
afterAll(async () => {
  await worker?.close();
  if (worker) await deleteTestTopology(hub);
  await broker?.close();
  await receptor?.fechar();
  await hub?.close();
});

const naoExiste = (pergunta: Promise<unknown>) => expect(pergunta).rejects.toMatchObject({ code: 404 });

it('When a job waits in an old delay queue as the previous version left it, then the new worker moves it to the retry ladder, removes the old queue and exchange, and the job is delivered', async () => {
  const antiga = hub.topologia.escadaAntiga;
  const filaAntiga = antiga.queueName(PASSO_MS);
  // The delivery's row as a failed attempt leaves it: waiting for its next attempt, due after the step.
  const c = await cenario(hub);
  const assinatura = await c.assinar(receptor.url('/ok'));
  const [trabalho] = await c.entregar([assinatura], { publicar: false });
  await hub.db.$executeRaw`
    update entrega set situacao = 'aguardando_nova_tentativa', tentativas_no_ciclo_atual = 1,
           proxima_tentativa_em = now() + ${PASSO_MS}::int * interval '1 millisecond',
           retorno_ate = now() + ${PASSO_MS}::int * interval '1 millisecond'
     where id = ${trabalho!.entrega_id}::uuid`;
  // The old worker's topology: its delay queue dead-letters back to the work exchange.
  await broker.withChannel(async (ch) => {
    await declareDeliveryTopology(ch, [], hub.topologia);
    await ch.assertExchange(antiga.exchange, 'direct', { durable: true });
    await ch.assertQueue(filaAntiga, {
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-message-ttl': PASSO_MS,
        'x-dead-letter-exchange': hub.topologia.entregas,
        'x-dead-letter-routing-key': trabalhoDeEntrega.routingKey,
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    });
    await ch.bindQueue(filaAntiga, antiga.exchange, filaAntiga);
  });
  await broker.publish(antiga.exchange, filaAntiga, Buffer.from(JSON.stringify(trabalho)), {
    messageId: trabalho!.entrega_id,
    expiration: String(PASSO_MS),
    mandatory: true,
  });

  worker = await startDeliveryWorkerForTests(hub, { DELIVERY_RETRY_DELAYS: '5s' });
  await naoExiste(broker.withChannel((ch) => ch.checkQueue(filaAntiga)));
  await naoExiste(broker.withChannel((ch) => ch.checkExchange(antiga.exchange)));
  // It waits out its step again in the ladder (its own expiration kept).
  expect((await broker.withChannel((ch) => ch.checkQueue(retryQueueName(PASSO_MS)))).messageCount).toBeGreaterThan(0);

  await waitFor(
    async () =>
      (await hub.db.entrega.findUniqueOrThrow({ where: { id: trabalho!.entrega_id } })).situacao === 'concluida',
    { what: 'the delivery concluida', timeoutMs: 20_000 },
  );
  expect(receptor.de('/ok').filter((r) => r.cabecalhos['webhook-id'] === trabalho!.entrega_id)).toHaveLength(1);
}, 40_000);
