import { Broker } from '@hub/broker';
import { createLogger } from '@hub/log';
import { declareConsumingQueue, declareInternalTopology, EXCHANGES, QUEUES } from './index';

const RABBITMQ_URL = process.env.RABBITMQ_URL;
if (!RABBITMQ_URL) throw new Error('RABBITMQ_URL is not set (jest.config.js sets it up for the tests)');
let broker: Broker;
beforeEach(async () => {
  broker = await new Broker(RABBITMQ_URL, createLogger('contracts-test'), { name: 'contracts-test' }).start();
});
afterEach(async () => {
  await broker.close();
});

describe('Internal topology', () => {
  it('When the topology is declared twice, then the new queue dead-letters to <queue>.mortas', async () => {
    await broker.withChannel(declareInternalTopology);
    await broker.withChannel(declareInternalTopology);
    // A rejected message of the new queue rests in its dead-letter queue. Other test files publish
    // to the same exchange, so the message is told apart by its body.
    const body = `{"marca":"${process.pid}.${Date.now()}"}`;
    await broker.publish(EXCHANGES.identidade, 'colaborador.sincronizado', Buffer.from(body));
    const take = (queue: string, reject: boolean) =>
      broker.withChannel(async (ch) => {
        for (;;) {
          const got = await ch.get(queue);
          if (!got) continue;
          if (got.content.toString() !== body) ch.ack(got);
          else {
            if (reject) ch.nack(got, false, false);
            else ch.ack(got);
            return got;
          }
        }
      });
    await take(QUEUES.acessoColaboradores, true);
    const morta = await take(`${QUEUES.acessoColaboradores}.mortas`, false);
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
    ).rejects.toThrow(/exists with other arguments.*docs\/decisions.md/);
    await broker.withChannel(async (ch) => {
      await ch.deleteQueue(queue);
      await ch.deleteQueue(`${queue}.mortas`);
      await ch.deleteExchange(`${queue}.mortas`);
    });
  });
});
