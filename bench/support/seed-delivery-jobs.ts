import type { Broker } from '../../packages/broker/src';
import type { cenario as Cenario, TestHub } from '../../services/delivery-worker/src/delivery-worker.test-support';
import { abrirDestinos } from './local-infra';

/**
 * Delivery jobs waiting in the work queue as publication leaves them: events with one delivery per
 * receiver URL (a subscription each, `concorrencia` POSTs at once for its destination), their jobs
 * published. `cenario` is passed in: the worker's test helpers are loaded after RABBITMQ_URL is set.
 * Gives how many deliveries wait.
 */
export async function semearEntregas(
  cenario: typeof Cenario,
  hub: TestHub,
  broker: Broker,
  urls: string[],
  entregas: number,
  concorrencia = 50,
): Promise<number> {
  const c = await cenario(hub);
  const assinaturas = await Promise.all(urls.map((url) => c.assinar(url)));
  await abrirDestinos(hub.db, urls, concorrencia);
  const eventos = Math.ceil(entregas / urls.length);
  let feitos = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (feitos < eventos) {
        feitos++;
        await c.entregar(assinaturas, { broker, dados: '{"pedido":"12345","valor":1999,"itens":[1,2,3]}' });
      }
    }),
  );
  return eventos * urls.length;
}
