import type { ColaboradorSincronizado } from '@hub/contracts';
import { executeOnPrisma } from '@hub/database';
import type { DbClient } from '../../db';
import { COLABORADOR_APLICAR } from './colaboradores.sql';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Function ids are compared as text: a uuid in upper case still names the same function. */
const funcaoIdDe = (funcaoId: string | null) => {
  const id = funcaoId?.trim();
  if (!id) return null;
  return UUID.test(id) ? id.toLowerCase() : id;
};

/** The collaborator's members of a `colaborador.atualizado` announcement's dados, as JSON text. */
export const anuncioDe = (c: Pick<ColaboradorSincronizado, 'termoauth_id' | 'email' | 'nome' | 'ativo'>) =>
  JSON.stringify({ termoauth_id: c.termoauth_id, email: c.email, nome: c.nome, ativo: c.ativo }).slice(1, -1);

export function colaboradoresRepository(db: DbClient) {
  return {
    /**
     * Applies one synchronisation message, idempotently: a message whose versao is not newer than
     * the stored one changes nothing (duplicates, out-of-order arrivals). A removal is stored as a
     * tombstone carrying its versao, so an older message cannot resurrect the collaborator.
     * Returns whether the projection changed.
     */
    async aplicar(mensagem: ColaboradorSincronizado, cliente: DbClient = db): Promise<boolean> {
      const changed = await executeOnPrisma(cliente, COLABORADOR_APLICAR, [
        mensagem.termoauth_id,
        mensagem.email,
        mensagem.nome,
        funcaoIdDe(mensagem.funcao_id),
        mensagem.ativo,
        mensagem.removido,
        BigInt(mensagem.versao),
        anuncioDe(mensagem),
      ]);
      return changed > 0;
    },
  };
}

export type ColaboradoresRepository = ReturnType<typeof colaboradoresRepository>;
