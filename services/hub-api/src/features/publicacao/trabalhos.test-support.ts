import type { ConsumeMessage } from '@hub/broker';
import { EXCHANGES, type TrabalhoDeEntrega, trabalhoDeEntrega } from '@hub/contracts';
import { uniqueName, waitFor } from '@hub/testing';
import type { RunningHubApi } from '../../start';

/**
 * A queue of the test's own, bound like the worker's, on the hub's own connection (so on its virtual
 * host): it sees every delivery job the hub publishes, publication's right after its commit
 * (despacho.ts) and the relay's from the outbox alike. `trabalhos(ids)` waits until each delivery's
 * job has arrived and gives every copy of each.
 */
export async function observarTrabalhos(hub: Pick<RunningHubApi, 'broker'>) {
  const fila = uniqueName('teste.trabalhos');
  const recebidos = new Map<string, TrabalhoDeEntrega[]>();
  await hub.broker.declare(async (channel) => {
    await channel.assertQueue(fila, { durable: false, exclusive: true });
    await channel.bindQueue(fila, EXCHANGES.entregas, trabalhoDeEntrega.routingKey);
  });
  await hub.broker.consume(fila, async (message: ConsumeMessage) => {
    const trabalho = trabalhoDeEntrega.schema.parse(JSON.parse(message.content.toString()));
    recebidos.set(trabalho.entrega_id, [...(recebidos.get(trabalho.entrega_id) ?? []), trabalho]);
  });
  return {
    recebidos,
    async trabalhos(ids: string[]): Promise<Map<string, TrabalhoDeEntrega[]>> {
      await waitFor(() => ids.every((id) => recebidos.has(id)), { what: 'the delivery jobs' });
      return new Map(ids.map((id) => [id, recebidos.get(id)!]));
    },
  };
}
