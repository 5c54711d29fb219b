import { invalidField, notFound, type PageRequest, page } from '@hub/http';
import { z } from 'zod';
import type { Db } from '../../db';
import { type AccessEvents, comAnuncios } from '../../events';
import { iso } from '../acessos/acessos.model';
import { acessosRepository } from '../acessos/acessos.repository';
import { type Chamador, exigirAlcance, exigirDentroDasPermissoes } from '../perfis/delegacao';
import { perfisRepository } from '../perfis/perfis.repository';
import { type ColaboradorRow, colaboradoresRepository } from './colaboradores.repository';

export const colaboradorSchema = z.object({
  id: z.string(),
  email: z.string(),
  nome: z.string(),
  termoauth_id: z.string().nullable(),
  vinculado: z.boolean(),
  funcao_id: z.string().nullable(),
  ativo: z.boolean(),
  perfil_de_acesso_id: z.string().nullable(),
  perfil_de_acesso_nome: z.string().nullable(),
  criado_em: z.string(),
  atualizado_em: z.string(),
});
export type ColaboradorView = z.infer<typeof colaboradorSchema>;

/**
 * A collaborator is an access of perfil colaborador seen with the identity service's data (name,
 * function, link). Its id is the access id. Only its access profile is changed here.
 */
export function colaboradoresService({ db, events }: { db: Db; events: AccessEvents }) {
  const colaboradores = colaboradoresRepository(db);

  async function view(rows: ColaboradorRow[]): Promise<ColaboradorView[]> {
    const funcoes = await colaboradores.funcoes(rows.flatMap((r) => (r.termoauthId === null ? [] : [r.termoauthId])));
    return rows.map((r) => ({
      id: r.id,
      email: r.email,
      nome: r.nome ?? r.email,
      termoauth_id: r.termoauthId,
      vinculado: r.termoauthId !== null,
      funcao_id: r.termoauthId ? (funcoes.get(r.termoauthId) ?? null) : null,
      ativo: r.ativo,
      perfil_de_acesso_id: r.perfilDeAcessoId,
      perfil_de_acesso_nome: r.perfilDeAcesso?.nome ?? null,
      criado_em: iso(r.criadoEm),
      atualizado_em: iso(r.atualizadoEm),
    }));
  }

  async function get(id: string): Promise<ColaboradorView> {
    const row = await colaboradores.byId(id);
    if (!row) throw notFound('collaborator');
    const [found] = await view([row]);
    return found!;
  }

  return {
    get,

    async page(request: PageRequest & { busca?: string }) {
      const { itens, total } = await colaboradores.page(request);
      return page(await view(itens), request, total);
    },

    async autocomplete(request: PageRequest & { busca?: string }) {
      const { itens, total } = await colaboradores.autocomplete(request);
      return page(
        itens.map((r) => ({ id: r.id, email: r.email, nome: r.nome ?? r.email })),
        request,
        total,
      );
    },

    filtro: async (busca?: string) => view(await colaboradores.filtro(busca)),

    /**
     * Gives the access a profile (null removes it). Nobody but a master changes their own profile,
     * and a non-master neither hands out nor takes away more than they hold: the profile given and
     * the one replaced must both be within the caller's permissions (the rule of reach, as for
     * PATCH and DELETE /auth). The access and both profiles stay locked until the change commits,
     * so neither profile can be deleted or widened meanwhile.
     */
    async assignProfile(id: string, perfilDeAcessoId: string | null, chamador: Chamador): Promise<ColaboradorView> {
      await comAnuncios(db, events, async (tx, anunciar) => {
        const row = await acessosRepository(tx).paraAlterar(id);
        if (!row) throw notFound('collaborator');
        exigirAlcance(row, chamador, 'changed', 'perfil_proprio');
        if (perfilDeAcessoId !== null) {
          const perfil = await perfisRepository(tx).lockShared(perfilDeAcessoId);
          if (!perfil)
            throw invalidField('/perfil_de_acesso_id', 'perfil_inexistente', 'no access profile has this id');
          exigirDentroDasPermissoes(perfil.permissoes, chamador, 'this access profile');
        }
        await colaboradoresRepository(tx).setPerfil(id, perfilDeAcessoId);
        anunciar({ email: row.email, acesso_id: id, motivo: 'perfil_atribuido' });
      });
      return get(id);
    },
  };
}

export type ColaboradoresService = ReturnType<typeof colaboradoresService>;
