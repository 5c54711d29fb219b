import { type PrivateRabbit, startPrivateRabbit } from '@hub/testing';
import { montarPalco, type Palco } from '../e2e/palco';
import { conferir } from './conferencia';
import { prepararPublicacao, rajadaComFalha } from './ensaio';
import { ENTREGADOR_RAPIDO, RITMO } from './ritmo';

/**
 * Issue 18, scenario (c): the delivery topology on a three-node RabbitMQ cluster of the test's own,
 * every service given the three nodes (RABBITMQ_URL lists them), the work queue a quorum queue with
 * a replica on each node. Mid-burst the node leading the work queue stops and stays down.
 */
const FILA = 'delivery-worker.entregas.v2';
let rabbit: PrivateRabbit;
let palco: Palco;

beforeAll(async () => {
  rabbit = await startPrivateRabbit({ nodes: 3 });
  palco = await montarPalco({
    rabbitmqUrl: rabbit.urls.join(','),
    env: { 'delivery-worker': ENTREGADOR_RAPIDO },
  });
}, 180_000);

afterAll(async () => {
  await palco?.encerrar();
  await rabbit?.close();
}, 120_000);

test('When the node leading the work queue of a three-node cluster stops during a burst, then no accepted event is lost, copies keep their webhook-id and every service is the same process', async () => {
  const { platform, assinante } = palco;
  expect((await rabbit.membersOf(FILA)).sort()).toEqual([0, 1, 2]);
  const publicacao = await prepararPublicacao(platform, assinante, 'cluster');
  // Asked before the burst (rabbitmqctl takes a second or more): nothing moves a leader while its node runs.
  const parado = await rabbit.leaderOf(FILA);
  const antes = await rabbit.connections();
  const resultado = await rajadaComFalha(
    { platform, assinante, ...RITMO, falha: () => rabbit.stop(parado) },
    publicacao,
  );
  await conferir('cluster: leader of the work queue stopped', platform, assinante, resultado, {
    porSegundo: RITMO.porSegundo,
  });
  // Every service that had a connection has one again, on a node that runs (they all start on the first).
  const servicos = (conexoes: { name: string; node: number }[]) => conexoes.map((c) => c.name.split(' ')[0]).sort();
  const depois = await rabbit.connections();
  expect(depois.filter((c) => c.node === parado)).toEqual([]);
  expect(servicos(depois)).toEqual(servicos(antes));
  if (process.env.FALHAS_NUMEROS)
    console.log(
      `cluster: node ${parado + 1} of 3 stopped; connections before on nodes ${antes.map((c) => c.node + 1)}, after on ${depois.map((c) => c.node + 1)}`,
    );
  // The queue went on under another leader, among the two replicas left.
  expect(rabbit.running(parado)).toBe(false);
  expect([0, 1, 2].filter((i) => i !== parado)).toContain(await rabbit.leaderOf(FILA));
}, 240_000);
