import type { ColaboradorSincronizado } from '@hub/contracts';
import { type Db, transacao } from '../../db';
import { travarEmail } from '../acessos/acessos.repository';
import type { AccessEvents } from '../../events';
import { normalizeEmail } from '../acessos/acessos.model';
import { colaboradoresRepository } from './colaboradores.repository';

/**
 * Applies the identity service's collaborator synchronisation: keeps the projection and links the
 * live access of the same e-mail (vinculado, nome, termoauth_id), or unlinks it when the
 * collaborator is removed or moved to another e-mail. Projection and links change in one transaction.
 */
export function sincronizacaoService({ db, events }: { db: Db; events: AccessEvents }) {
  return {
    /** Returns whether the message changed the projection (false for duplicates and late ones). */
    async sincronizar(message: ColaboradorSincronizado): Promise<boolean> {
      const email = normalizeEmail(message.email);
      const result = await transacao(db, async (tx) => {
        const colaboradores = colaboradoresRepository(tx);
        await travarEmail(tx, email);
        if (!(await colaboradores.aplicarProjecao(message, email))) return { applied: false, emails: [] };
        const unlinked = await colaboradores.desvincular(message, email);
        const linked = message.removido ? [] : await colaboradores.vincular(message, email);
        return { applied: true, emails: [...unlinked, ...linked].map((row) => row.email) };
      });
      for (const changed of new Set(result.emails)) {
        await events.changed({ email: changed, motivo: 'colaborador_sincronizado' });
      }
      return result.applied;
    },
  };
}

export type SincronizacaoService = ReturnType<typeof sincronizacaoService>;
