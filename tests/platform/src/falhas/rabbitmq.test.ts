import { type PrivateRabbit, startPrivateRabbit } from '@hub/testing';
import { montarPalco, type Palco } from '../e2e/palco';
import { conferir, conferirRegistros } from './conferencia';
import { prepararPublicacao, rajadaComFalha } from './ensaio';
import { ENTREGADOR_RAPIDO, RITMO } from './ritmo';

/**
 * Issue 18, scenario (b): the platform on a RabbitMQ node of the test's own, restarted (a clean
 * stop, then a start on the same data and port) while publications arrive through the gateway.
 */
let rabbit: PrivateRabbit;
let palco: Palco;

beforeAll(async () => {
  rabbit = await startPrivateRabbit({ nodes: 1 });
  palco = await montarPalco({ rabbitmqUrl: rabbit.urls[0], env: { 'delivery-worker': ENTREGADOR_RAPIDO } });
}, 180_000);

afterAll(async () => {
  await palco?.encerrar();
  await rabbit?.close();
}, 120_000);

test('When RabbitMQ is restarted during a burst of publications, then no accepted event is lost, copies keep their webhook-id and every service is the same process', async () => {
  const { platform, assinante } = palco;
  const publicacao = await prepararPublicacao(platform, assinante, 'rabbitmq');
  const resultado = await rajadaComFalha({ platform, assinante, ...RITMO, falha: () => rabbit.restart(0) }, publicacao);
  await conferir('RabbitMQ restarted', platform, assinante, resultado, { porSegundo: RITMO.porSegundo });
  await conferirRegistros(platform);
}, 240_000);
