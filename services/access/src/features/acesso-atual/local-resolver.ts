import type { AccessResolver, UserClaims } from '@hub/auth';
import type { AcessoAtual } from '@hub/contracts';
import { isUniqueViolation } from '@hub/database';
import { forbidden } from '@hub/http';
import { normalizeEmail, normalizePermissoes, PERFIL_MASTER, permissoesDoMaster } from '../acessos/acessos.model';
import type { AcessosRepository } from '../acessos/acessos.repository';

/**
 * The authority on "who is the caller and what may they do", reading the access service's own
 * database. Other services ask it over HTTP (GET /auth/acesso) and cache the answer briefly.
 */
export function localAccessResolver(repository: AcessosRepository, loginTouchIntervalMs: number): AccessResolver {
  /** A master's first access creates its registration. */
  async function registerMaster(email: string) {
    try {
      await repository.create({ email, perfil: PERFIL_MASTER, master: true });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error; // two first requests at once: the other one won
    }
    const acesso = await repository.byEmail(email);
    if (!acesso) throw new Error('master registration vanished');
    return acesso;
  }

  return {
    async resolve(claims: UserClaims): Promise<AcessoAtual> {
      const email = normalizeEmail(claims.email);
      let acesso = await repository.byEmail(email);
      if (!acesso) {
        if (!claims.master) throw forbidden('this user has no access to the panel', 'acesso_nao_cadastrado');
        acesso = await registerMaster(email);
      }
      const master = claims.master;
      // A master's access is never changed, so it is never inactive: an access somebody else made
      // and switched off for the e-mail before its master's first sign-in must not lock them out.
      if (!acesso.ativo && !master) throw forbidden('this access is inactive', 'acesso_inativo');
      const now = new Date();
      if (acesso.bloqueadoAte && acesso.bloqueadoAte > now)
        throw forbidden('this access is blocked for now', 'acesso_bloqueado');
      if (
        acesso.master !== master ||
        (master && !acesso.ativo) ||
        !acesso.ultimoLoginEm ||
        now.getTime() - acesso.ultimoLoginEm.getTime() > loginTouchIntervalMs
      ) {
        // The identity service is the authority on who is a master; the record follows it.
        await repository.touchLogin(acesso.id, now, master);
      }
      return {
        id: acesso.id,
        email: acesso.email,
        nome: claims.name || acesso.nome || acesso.email,
        perfil: acesso.perfil,
        master,
        perfil_acesso: acesso.perfilDeAcesso?.nome ?? null,
        permissoes: master ? permissoesDoMaster() : normalizePermissoes(acesso.perfilDeAcesso?.permissoes),
      };
    },
  };
}
