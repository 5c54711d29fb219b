import { OUTBOX_INSERIR, outboxColumns } from '@hub/outbox';
import { executeOnPrisma } from '@hub/database';
import type { Tx } from '../../db';
import { ENTREGA_NOVO_CICLO } from './entregas.sql';
import { mensagemDoTrabalho, trabalhosDasEntregas } from './trabalho';

/**
 * A new cycle for these deliveries (architecture §5), inside the caller's transaction: situacao pendente,
 * tentativas_no_ciclo_atual back to 0 (quantidade_de_tentativas keeps counting), next attempt now,
 * the subscription's current url_de_destino and maximo_de_tentativas (an operator who fixed the
 * address reprocesses towards the new one), and one job per delivery in the outbox, so the jobs are
 * published if and only if the cycle commits. The caller has locked the rows and checked their state.
 * An ordered delivery goes at once, waiting for no earlier one, with its original sequencia (one
 * cancelled while it waited is no longer em_espera: the sweeper may send its job again if it is lost);
 * the turn of its entity is not touched (docs/decisions/ordered-delivery-per-entity.md).
 */
export async function iniciarNovoCiclo(tx: Tx, ids: readonly string[], agora: Date, requestId: string | null) {
  if (ids.length === 0) return;
  await executeOnPrisma(tx, ENTREGA_NOVO_CICLO, [agora, ids]);
  const trabalhos = await trabalhosDasEntregas(tx, ids, requestId);
  await executeOnPrisma(tx, OUTBOX_INSERIR, outboxColumns([...trabalhos.values()].map(mensagemDoTrabalho)));
}
