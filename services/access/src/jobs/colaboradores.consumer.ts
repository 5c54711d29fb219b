import type { ColaboradorSincronizado } from '@hub/contracts';
import type { Db } from '../db';
import type { AccessEvents } from '../events';

/**
 * Applies one collaborator synchronisation from the identity service: keeps the projection (only a
 * newer `versao` wins, so duplicates and late messages change nothing) and links the live access of
 * the same e-mail (vinculado, nome, termoauth_id), or unlinks it when the collaborator is removed
 * or moved to another e-mail.
 */
export async function applyColaborador(
  db: Db,
  events: AccessEvents,
  message: ColaboradorSincronizado,
): Promise<boolean> {
  const email = message.email.trim().toLowerCase();
  const affected = await db.$transaction(async (tx) => {
    const applied = await tx.$executeRaw`
      insert into colaborador (termoauth_id, email, nome, funcao_id, ativo, removido, versao, atualizado_em)
      values (${message.termoauth_id}, ${email}, ${message.nome}, ${message.funcao_id}, ${message.ativo}, ${message.removido}, ${message.versao}, now())
      on conflict (termoauth_id) do update set
        email = excluded.email, nome = excluded.nome, funcao_id = excluded.funcao_id, ativo = excluded.ativo,
        removido = excluded.removido, versao = excluded.versao, atualizado_em = excluded.atualizado_em
      where colaborador.versao < excluded.versao`;
    if (applied === 0) return [];
    const unlinked = await tx.$queryRaw<{ email: string }[]>`
      update acesso set termoauth_id = null, nome = null, atualizado_em = now()
      where termoauth_id = ${message.termoauth_id} and (${message.removido} or email <> ${email})
      returning email`;
    const linked = message.removido
      ? []
      : await tx.$queryRaw<{ email: string }[]>`
          update acesso set termoauth_id = ${message.termoauth_id}, nome = ${message.nome}, atualizado_em = now()
          where email = ${email} and excluido_em is null
            and (termoauth_id is distinct from ${message.termoauth_id} or nome is distinct from ${message.nome})
          returning email`;
    return [...unlinked, ...linked].map((row) => row.email);
  });
  for (const changed of new Set(affected)) await events.changed({ email: changed, motivo: 'colaborador_sincronizado' });
  return affected.length > 0;
}
