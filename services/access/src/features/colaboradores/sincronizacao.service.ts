import { emailAscii } from '@hub/auth';
import type { ColaboradorSincronizado } from '@hub/contracts';
import type { Db } from '../../db';
import { travarEmail } from '../acessos/acessos.repository';
import { type AccessEvents, comAnuncios } from '../../events';
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
      // No access has such an e-mail, and lower-cased it could fold onto one that does (emailAscii).
      const email = normalizeEmail(message.email);
      if (!emailAscii(email)) return false;
      return comAnuncios(db, events, async (tx, anunciar) => {
        const colaboradores = colaboradoresRepository(tx);
        await travarEmail(tx, email);
        if (!(await colaboradores.aplicarProjecao(message, email))) return false;
        const unlinked = await colaboradores.desvincular(message, email);
        const linked = message.removido ? [] : await colaboradores.vincular(message, email);
        for (const changed of new Set([...unlinked, ...linked].map((row) => row.email)))
          anunciar({ email: changed, motivo: 'colaborador_sincronizado' });
        return true;
      });
    },
  };
}

export type SincronizacaoService = ReturnType<typeof sincronizacaoService>;
