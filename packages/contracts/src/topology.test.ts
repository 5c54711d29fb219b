import { Broker, RETRY_EXCHANGE, retryQueueName, retryRoute, UnroutableError } from '@hub/broker';
import { createLogger } from '@hub/log';
import {
  DELIVERY_LIMIT,
  declareConsumingQueue,
  declareDeliveryTopology,
  declareDestinationQueue,
  destinationQueueName,
  destinationRoutingKey,
  declareInternalTopology,
  EXCHANGES,
  QUEUES,
  trabalhoDeEntrega,
} from './index';

const RABBITMQ_URL = process.env.RABBITMQ_URL;
if (!RABBITMQ_URL) throw new Error('RABBITMQ_URL is not set (jest.config.js sets it up for the tests)');
let broker: Broker;
beforeEach(async () => {
  broker = await new Broker(RABBITMQ_URL, createLogger('contracts-test'), { name: 'contracts-test' }).start();
});
afterEach(async () => {
  await broker.close();
});

/** Takes the message with this body out of a queue (acking the others, which other files left there). */
const take = (queue: string, body: string, reject: boolean) =>
  broker.withChannel(async (ch) => {
    for (;;) {
      const got = await ch.get(queue);
      if (!got) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      if (got.content.toString() !== body) ch.ack(got);
      else {
        if (reject) ch.nack(got, false, false);
        else ch.ack(got);
        return got;
      }
    }
  });

describe('Internal topology', () => {
  it('When the topology is declared twice, then the new queue dead-letters to <queue>.mortas', async () => {
    await broker.withChannel(declareInternalTopology);
    await broker.withChannel(declareInternalTopology);
    // A rejected message of the new queue rests in its dead-letter queue. Other test files publish
    // to the same exchange, so the message is told apart by its body.
    const body = `{"marca":"${process.pid}.${Date.now()}"}`;
    await broker.publish(EXCHANGES.identidade, 'colaborador.sincronizado', Buffer.from(body));
    await take(QUEUES.acessoColaboradores, body, true);
    const morta = await take(`${QUEUES.acessoColaboradores}.mortas`, body, false);
    expect(morta.properties.headers?.['x-death']).toEqual([
      expect.objectContaining({ queue: QUEUES.acessoColaboradores, reason: 'rejected' }),
    ]);
  });

  it('When several processes declare the topology at the same moment, then every declaration succeeds', async () => {
    for (let round = 0; round < 5; round++) {
      // Each start declares on a channel of its own, as separate processes would.
      await Promise.all(Array.from({ length: 4 }, () => broker.withChannel(declareInternalTopology)));
    }
    await expect(broker.withChannel((ch) => ch.checkQueue(QUEUES.acessoColaboradores))).resolves.toBeDefined();
  });

  it('When a consuming queue exists with other arguments, then the declaration fails with a message that says what to do', async () => {
    const queue = `test.contracts.${process.pid}.${Date.now()}`;
    await broker.withChannel((ch) => ch.assertQueue(queue, { durable: true }));
    await expect(
      broker.withChannel((ch) => declareConsumingQueue(ch, queue, EXCHANGES.identidade, '#')),
    ).rejects.toThrow(/exists with other arguments.*docs\/decisions\/queues-with-dead-letters\.md/);
    await broker.withChannel(async (ch) => {
      await ch.deleteQueue(queue);
      await ch.deleteQueue(`${queue}.mortas`);
      await ch.deleteExchange(`${queue}.mortas`);
    });
  });
});

describe('Delivery topology', () => {
  const steps = [40, 400];
  const job = () =>
    JSON.stringify({
      entrega_id: `${process.pid}.${Date.now()}.${Math.random()}`,
      evento_id: 'e',
      assinatura_id: 'a',
      url_de_destino: 'http://127.0.0.1:1/',
      corpo: '{}',
      request_id: null,
    });

  it('When hub-api (no steps) and workers (steps) declare it at the same moment and again, then every declaration succeeds and every queue exists', async () => {
    await Promise.all([
      broker.withChannel((ch) => declareDeliveryTopology(ch)),
      broker.withChannel((ch) => declareDeliveryTopology(ch, steps)),
      broker.withChannel((ch) => declareDeliveryTopology(ch, steps)),
    ]);
    await broker.withChannel((ch) => declareDeliveryTopology(ch, steps));
    for (const queue of [QUEUES.entregas, QUEUES.entregasErro, ...steps.map(retryQueueName)])
      await expect(broker.withChannel((ch) => ch.checkQueue(queue))).resolves.toMatchObject({ queue });
  });

  /** A job into the ladder's step, back to the work queue. */
  const toStep = (stepMs: number, body: string, mandatory = false) => {
    const route = retryRoute(stepMs, QUEUES.entregas);
    return broker.publish(route.exchange, route.routingKey, Buffer.from(body), { headers: route.headers, mandatory });
  };

  it('When a job is published to a step of the retry ladder, then it comes back to the work queue after the step, not before', async () => {
    await broker.withChannel((ch) => declareDeliveryTopology(ch, steps));
    const body = job();
    const sent = Date.now();
    await toStep(400, body, true);
    const back = await take(QUEUES.entregas, body, false);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(400);
    expect(back.fields).toMatchObject({ exchange: '', routingKey: QUEUES.entregas });
    expect(back.properties.headers?.['x-death']).toEqual([
      expect.objectContaining({ queue: retryQueueName(400), exchange: RETRY_EXCHANGE, reason: 'expired' }),
    ]);
  });

  it('When a short step is published after a long one, then the short one comes back first', async () => {
    await broker.withChannel((ch) => declareDeliveryTopology(ch, steps));
    const longo = job();
    const curto = job();
    await toStep(400, longo);
    await toStep(40, curto);
    const order: string[] = [];
    await broker.withChannel(async (ch) => {
      while (order.length < 2) {
        const got = await ch.get(QUEUES.entregas);
        if (!got) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        ch.ack(got);
        const text = got.content.toString();
        if (text === longo) order.push('longo');
        if (text === curto) order.push('curto');
      }
    });
    expect(order).toEqual(['curto', 'longo']);
  });

  it('When a destination queue is declared, then a job sent by its routing key rests there, one delivered too often is dead-lettered to the error queue, and once it is deleted a mandatory publish by that key is returned', async () => {
    await broker.withChannel((ch) => declareDeliveryTopology(ch));
    const chave = `teste-${process.pid}-${Date.now()}`;
    await broker.withChannel((ch) => declareDestinationQueue(ch, chave));
    await broker.withChannel((ch) => declareDestinationQueue(ch, chave));
    const body = job();
    await broker.publish(EXCHANGES.entregas, destinationRoutingKey(chave), Buffer.from(body), { mandatory: true });
    // Given back DELIVERY_LIMIT times (each a worker dying with it), the next return dead-letters it.
    await broker.withChannel(async (ch) => {
      for (let i = 0; i <= DELIVERY_LIMIT; i += 1) {
        const got = await ch.get(destinationQueueName(chave));
        if (!got) throw new Error('the job left the destination queue too early');
        ch.nack(got, false, true);
      }
    });
    const erro = await take(QUEUES.entregasErro, body, false);
    expect(erro.properties.headers?.['x-death']).toEqual([
      expect.objectContaining({ queue: destinationQueueName(chave), reason: 'delivery_limit' }),
    ]);
    await broker.withChannel((ch) => ch.deleteQueue(destinationQueueName(chave)));
    await expect(
      broker.publish(EXCHANGES.entregas, destinationRoutingKey(chave), Buffer.from(body), { mandatory: true }),
    ).rejects.toBeInstanceOf(UnroutableError);
  });

  it('When a job of the work queue is rejected, then it rests in the error queue', async () => {
    await broker.withChannel((ch) => declareDeliveryTopology(ch));
    const body = job();
    await broker.publish(EXCHANGES.entregas, trabalhoDeEntrega.routingKey, Buffer.from(body));
    await take(QUEUES.entregas, body, true);
    const erro = await take(QUEUES.entregasErro, body, false);
    expect(erro.properties.headers?.['x-death']).toEqual([
      expect.objectContaining({ queue: QUEUES.entregas, reason: 'rejected' }),
    ]);
  });
});
