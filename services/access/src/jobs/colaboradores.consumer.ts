import { dadosRecusados } from '@hub/database';
import { type Broker, consumeMessages } from '@hub/broker';
import { bancoIndisponivel } from '@hub/http';
import { type ColaboradorSincronizado, colaboradorSincronizado } from '@hub/contracts';
import type { SincronizacaoService } from '../features/colaboradores/sincronizacao.service';

/** Told after each message is applied (committed): whether it changed the projection. */
export type AoSincronizar = (message: ColaboradorSincronizado, applied: boolean) => void;

/**
 * Consumes the identity service's collaborator synchronisation. A message that breaks its schema
 * or whose data the database refuses is rejected without requeue (to the queue's dead-letter
 * exchange, when it has one); an unreachable database means another try later, with backoff.
 */
export function consumeColaboradores(
  broker: Broker,
  queue: string,
  sincronizacao: SincronizacaoService,
  aoSincronizar?: AoSincronizar,
): Promise<void> {
  return consumeMessages(
    broker,
    queue,
    colaboradorSincronizado,
    async (message) => {
      const applied = await sincronizacao.sincronizar(message);
      aoSincronizar?.(message, applied);
    },
    { isFinal: dadosRecusados, isUnavailable: bancoIndisponivel },
  );
}
