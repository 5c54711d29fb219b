import { type Broker, publishMessage } from '@hub/broker';
import { type AcessoAlterado, acessoAlterado } from '@hub/contracts';
import type { Logger } from '@hub/log';

export interface AccessEvents {
  changed(change: AcessoAlterado): Promise<void>;
}

/**
 * Announces `acesso.alterado` so every service drops its cached permissions. The change is already
 * committed, so the request neither waits for the broker nor fails for it: if RabbitMQ is
 * unreachable the caches elsewhere still expire within their short TTL.
 */
export function brokerAccessEvents(broker: Broker, logger: Logger): AccessEvents {
  return {
    changed: async (change) => {
      publishMessage(broker, acessoAlterado, change).catch((error) =>
        logger.error({ err: error, motivo: change.motivo }, 'could not announce acesso.alterado'),
      );
    },
  };
}
