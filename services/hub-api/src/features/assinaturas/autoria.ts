import { AppError } from '@hub/http';
import { executeOnPrisma } from '@hub/database';
import type { DbClient } from '../../db';
import { APLICATIVO_TRAVAR } from './assinaturas.sql';

/**
 * Who makes a change to a subscription (migration 032): an operator of the panel, named by the
 * e-mail of the token, or the subscribing application itself, by its client_id.
 */
export interface Autor {
  tipo: 'aplicativo' | 'operador';
  quem: string;
}

/** The columns of the last change, written with every creation, change and deletion. */
export const colunasDaAutoria = (autor: Autor, agora: Date) => ({
  alteradaPorTipo: autor.tipo,
  alteradaPor: autor.quem,
  alteradaEm: agora,
});

/**
 * What an application's own write of its subscriptions must also respect (the panel's write has
 * none of these): its subscriptions held at most, and a type that is switched on.
 */
export interface RegrasDoAssinante {
  /** HUB_ASSINATURAS_POR_APLICATIVO: subscriptions not deleted the application may hold at once. */
  maximoDeAssinaturas: number;
}

/**
 * Refuses a new subscription past the application's budget, 429 limite_de_assinaturas. The
 * application's row is locked first, so two creations at once count one after the other and
 * neither passes the limit unseen.
 */
export async function exigirOrcamentoDeAssinaturas(tx: DbClient, aplicativoId: string, maximo: number): Promise<void> {
  await executeOnPrisma(tx, APLICATIVO_TRAVAR, [aplicativoId]);
  const mantidas = await tx.assinatura.count({ where: { aplicativoAssinanteId: aplicativoId, excluidaEm: null } });
  if (mantidas >= maximo) {
    throw new AppError(
      429,
      'limite_de_assinaturas',
      `the application already holds ${mantidas} subscriptions, the most HUB_ASSINATURAS_POR_APLICATIVO allows (${maximo}); delete one first`,
    );
  }
}
