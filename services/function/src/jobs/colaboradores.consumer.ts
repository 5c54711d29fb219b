import { dadosRecusados } from '@hub/database';
import { type Broker, consumeMessages } from '@hub/broker';
import { bancoIndisponivel } from '@hub/http';
import { type ColaboradorSincronizado, colaboradorSincronizado, QUEUES } from '@hub/contracts';
import type { Logger } from '@hub/log';
import type { ColaboradoresRepository } from '../features/colaboradores/colaboradores.repository';

/**
 * Keeps the projection of the identity service's collaborators from its `colaborador.sincronizado`
 * messages. A message is acked once applied; a database that is unreachable means another try later
 * (with backoff); a message that breaks its schema, or whose data the database refuses, goes to the
 * queue's dead-letter exchange.
 */
export function consumeColaboradores(
  broker: Broker,
  repo: ColaboradoresRepository,
  logger: Logger,
  queue: string = QUEUES.funcaoColaboradores,
  /** Told after each message was applied (or found stale): for operations and tests. */
  onApplied?: (mensagem: ColaboradorSincronizado, changed: boolean) => void,
): Promise<void> {
  return consumeMessages(
    broker,
    queue,
    colaboradorSincronizado,
    async (mensagem) => {
      const changed = await repo.aplicar(mensagem);
      logger.debug(
        { termoauth_id: mensagem.termoauth_id, versao: mensagem.versao, changed },
        'collaborator synchronised',
      );
      onApplied?.(mensagem, changed);
    },
    { prefetch: 50, isFinal: dadosRecusados, isUnavailable: bancoIndisponivel },
  );
}
