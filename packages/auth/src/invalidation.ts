import { randomUUID } from 'node:crypto';
import { type Broker, consumeMessages } from '@hub/broker';
import { acessoAlterado, EXCHANGES } from '@hub/contracts';
import type { CachedAccessResolver } from './resolver';

/**
 * Binds a private queue of this process (deleted with its connection) to the `acesso.alterado`
 * fanout and drops the cached permissions of whoever changed, or everybody's when a profile changed.
 */
export async function forgetOnAccessChange(
  broker: Broker,
  resolver: Pick<CachedAccessResolver, 'forget'>,
  service: string,
): Promise<void> {
  const queue = `hub.acesso.${service}.${randomUUID()}`;
  await broker.declare(async (channel) => {
    await channel.assertExchange(EXCHANGES.acesso, 'fanout', { durable: true });
    await channel.assertQueue(queue, { exclusive: true, autoDelete: true, durable: false });
    await channel.bindQueue(queue, EXCHANGES.acesso, '');
    // After a reconnection, changes made while disconnected are unknown: start afresh.
    resolver.forget();
  });
  await consumeMessages(broker, queue, acessoAlterado, async (body) => {
    resolver.forget(body.perfil_de_acesso_id ? undefined : body.email);
  });
}
