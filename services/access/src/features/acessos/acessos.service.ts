import { isUniqueViolation } from '@hub/database';
import { conflict, invalidField, notFound, type PageRequest, page } from '@hub/http';
import type { Db } from '../../db';
import { type AccessEvents, comAnuncios } from '../../events';
import type { Acesso } from '../../generated/prisma/client';
import { type Chamador, exigirAlcance } from '../perfis/delegacao';
import { emailProblem, normalizeEmail, PERFIL_COLABORADOR, toAuth } from './acessos.model';
import { type AcessoFiltro, acessosRepository } from './acessos.repository';

/** The rules of contract §3 (Access) and §4.1, in domain words; no HTTP, no SQL. */
export interface AcessosServiceDeps {
  db: Db;
  events: AccessEvents;
  companyDomain: string;
}

export function acessosService({ db, events, companyDomain }: AcessosServiceDeps) {
  const acessos = acessosRepository(db);

  async function get(id: string): Promise<Acesso> {
    const acesso = await acessos.byId(id);
    if (!acesso) throw notFound('access');
    return acesso;
  }

  function validEmail(raw: string): string {
    const email = normalizeEmail(raw);
    const problem = emailProblem(email, companyDomain);
    if (problem) throw invalidField('/email', problem.codigo, problem.mensagem);
    return email;
  }

  return {
    get: async (id: string) => toAuth(await get(id)),

    async page(request: PageRequest) {
      const { itens, total } = await acessos.page(request);
      return page(itens.map(toAuth), request, total);
    },

    async autocomplete(filtro: AcessoFiltro, request: PageRequest) {
      const { itens, total } = await acessos.autocomplete(filtro, request);
      return page(itens, request, total);
    },

    filtro: async (filtro: AcessoFiltro) => (await acessos.filtro(filtro)).map(toAuth),

    async create(input: { email: string; perfil: string }) {
      const email = validEmail(input.email);
      if (input.perfil !== PERFIL_COLABORADOR) {
        throw invalidField(
          '/perfil',
          'perfil_invalido',
          `only the perfil "${PERFIL_COLABORADOR}" is accepted on creation`,
        );
      }
      const acesso = await comAnuncios(db, events, async (tx, anunciar) => {
        const criado = await acessosRepository(tx).create({ email, perfil: PERFIL_COLABORADOR, master: false });
        anunciar({ email, acesso_id: criado.id, motivo: 'criado' });
        return criado;
      }).catch(rethrowEmailTaken);
      return toAuth(acesso);
    },

    /**
     * Changes the e-mail or the state, under the rule of reach (exigirAlcance). A new e-mail drops
     * the access profile (see the repository): otherwise whoever may edit accesses could move a
     * profile onto an address they control.
     */
    async update(id: string, input: { email?: string | null; ativo?: boolean | null }, chamador: Chamador) {
      const { antes, depois } = await comAnuncios(db, events, async (tx, anunciar) => {
        const repository = acessosRepository(tx);
        const acesso = await repository.paraAlterar(id);
        if (!acesso) throw notFound('access');
        exigirAlcance(acesso, chamador, 'changed', 'acesso_proprio');
        const email = input.email === null || input.email === undefined ? undefined : validEmail(input.email);
        const ativo = input.ativo ?? undefined;
        const changes = {
          ...(email !== undefined && email !== acesso.email ? { email } : {}),
          ...(ativo !== undefined && ativo !== acesso.ativo ? { ativo } : {}),
        };
        if (Object.keys(changes).length === 0) return { antes: acesso, depois: undefined };
        const depois = await repository.update(id, changes);
        anunciar({ email: acesso.email, acesso_id: id, motivo: 'alterado' });
        if (depois.email !== acesso.email) anunciar({ email: depois.email, acesso_id: id, motivo: 'alterado' });
        return { antes: acesso, depois };
      }).catch(rethrowEmailTaken);
      return toAuth(depois ?? antes);
    },

    async delete(id: string, chamador: Chamador): Promise<void> {
      await comAnuncios(db, events, async (tx, anunciar) => {
        const repository = acessosRepository(tx);
        const alvo = await repository.paraAlterar(id);
        if (!alvo) throw notFound('access');
        exigirAlcance(alvo, chamador, 'deleted', 'acesso_proprio');
        if (alvo.termoauthId !== null) {
          throw conflict(
            'acesso_vinculado',
            'a collaborator is linked to this access; it is removed in the identity service only',
          );
        }
        await repository.markDeleted(id);
        anunciar({ email: alvo.email, acesso_id: id, motivo: 'excluido' });
      });
    },
  };
}

export type AcessosService = ReturnType<typeof acessosService>;

function rethrowEmailTaken(error: unknown): never {
  if (isUniqueViolation(error)) throw conflict('email_em_uso', 'another access already has this e-mail');
  throw error;
}
