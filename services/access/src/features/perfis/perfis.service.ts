import { isUniqueViolation, uuidv7 } from '@hub/database';
import { conflict, notFound, type PageRequest, page } from '@hub/http';
import type { z } from 'zod';
import type { Db } from '../../db';
import { type AccessEvents, comAnuncios } from '../../events';
import { normalizePermissoes } from '../acessos/acessos.model';
import { type Chamador, exigirDentroDasPermissoes } from './delegacao';
import { perfisRepository } from './perfis.repository';
import { type perfilAtualizar, type perfilCriar, toPerfil } from './perfis.schemas';

/** Access profiles: a name and a permission map; an access has at most one. */
export function perfisService({ db, events }: { db: Db; events: AccessEvents }) {
  const perfis = perfisRepository(db);

  return {
    async page(request: PageRequest & { busca?: string }) {
      const { itens, total } = await perfis.page(request);
      return page(itens.map(toPerfil), request, total);
    },

    async autocomplete(request: PageRequest & { busca?: string }) {
      const { itens, total } = await perfis.autocomplete(request);
      return page(itens, request, total);
    },

    filtro: async (busca?: string) => (await perfis.filtro(busca)).map(toPerfil),

    async get(id: string) {
      const perfil = await perfis.byId(id);
      if (!perfil) throw notFound('access profile');
      return toPerfil(perfil);
    },

    /** A non-master creates only a profile within their own permissions, as they may edit only such a one. */
    async create(input: z.infer<typeof perfilCriar>, chamador: Chamador) {
      exigirDentroDasPermissoes(input.permissoes, chamador, 'the new access profile');
      const now = new Date();
      const perfil = await perfis
        .create({
          id: uuidv7(),
          nome: input.nome,
          permissoes: normalizePermissoes(input.permissoes),
          criadoEm: now,
          atualizadoEm: now,
        })
        .catch(nameTaken);
      return toPerfil(perfil);
    },

    /**
     * Renames or changes permissions. A non-master may touch only a profile within their own
     * permissions and keep it there: editing the profile one holds must not raise oneself.
     */
    async update(id: string, input: z.infer<typeof perfilAtualizar>, chamador: Chamador) {
      const updated = await comAnuncios(db, events, async (tx, anunciar) => {
        const repository = perfisRepository(tx);
        const atual = await repository.lockForUpdate(id);
        if (!atual) throw notFound('access profile');
        exigirDentroDasPermissoes(atual.permissoes, chamador, 'this access profile');
        if (input.permissoes !== undefined)
          exigirDentroDasPermissoes(input.permissoes, chamador, 'the new permissions');
        if (input.permissoes !== undefined || input.nome !== undefined)
          anunciar({ perfil_de_acesso_id: id, motivo: 'perfil_alterado' });
        return repository.update(id, {
          ...(input.nome !== undefined ? { nome: input.nome } : {}),
          ...(input.permissoes !== undefined ? { permissoes: normalizePermissoes(input.permissoes) } : {}),
          atualizadoEm: new Date(),
        });
      }).catch(nameTaken);
      return toPerfil(updated);
    },

    /**
     * Deletes a profile no live access holds; a non-master only one within their own permissions,
     * as for every other change of a profile. The row lock makes the check and the delete one
     * step against assignments (which share-lock the same row): exactly one of the two wins.
     */
    async delete(id: string, chamador: Chamador): Promise<void> {
      await comAnuncios(db, events, async (tx, anunciar) => {
        const repository = perfisRepository(tx);
        const atual = await repository.lockForUpdate(id);
        if (!atual) throw notFound('access profile');
        exigirDentroDasPermissoes(atual.permissoes, chamador, 'this access profile');
        await repository.unlinkDeleted(id);
        if (!(await repository.deleteIfUnused(id))) {
          throw conflict('perfil_em_uso', `${await repository.emUso(id)} access(es) use this profile`);
        }
        anunciar({ perfil_de_acesso_id: id, motivo: 'perfil_excluido' });
      });
    },
  };
}

export type PerfisService = ReturnType<typeof perfisService>;

function nameTaken(error: unknown): never {
  if (isUniqueViolation(error)) throw conflict('nome_em_uso', 'another access profile has this name');
  throw error;
}
