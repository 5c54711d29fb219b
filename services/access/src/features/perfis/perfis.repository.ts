import { executeOnPrisma, likeLiteral, runOnPrisma } from '@hub/database';
import { type PageRequest, skipTake } from '@hub/http';
import type { DbClient } from '../../db';
import type { PerfilDeAcesso, Prisma } from '../../generated/prisma/client';
import { PERFIL_EXCLUIR_SEM_USO, PERFIL_TRAVAR, PERFIL_TRAVAR_COMPARTILHADO } from './perfis.sql';

const byName = (busca?: string): Prisma.PerfilDeAcessoWhereInput =>
  busca ? { nome: { contains: likeLiteral(busca), mode: 'insensitive' } } : {};
const ordem = [{ nome: 'asc' }, { id: 'asc' }] satisfies Prisma.PerfilDeAcessoOrderByWithRelationInput[];

/** Access profiles as stored. */
export function perfisRepository(db: DbClient) {
  return {
    async page(request: PageRequest & { busca?: string }) {
      const where = byName(request.busca);
      const [itens, total] = await Promise.all([
        db.perfilDeAcesso.findMany({ where, orderBy: ordem, ...skipTake(request) }),
        db.perfilDeAcesso.count({ where }),
      ]);
      return { itens, total };
    },

    async autocomplete(request: PageRequest & { busca?: string }) {
      const where = byName(request.busca);
      const [itens, total] = await Promise.all([
        db.perfilDeAcesso.findMany({ where, select: { id: true, nome: true }, orderBy: ordem, ...skipTake(request) }),
        db.perfilDeAcesso.count({ where }),
      ]);
      return { itens, total };
    },

    filtro: (busca?: string) => db.perfilDeAcesso.findMany({ where: byName(busca), orderBy: ordem }),

    byId: (id: string) => db.perfilDeAcesso.findUnique({ where: { id } }),

    /**
     * Reads the profile and holds a share lock on its row until the transaction ends: it can then
     * be neither deleted nor have its permissions changed while an access is being given it.
     */
    async lockShared(id: string): Promise<Pick<PerfilDeAcesso, 'id' | 'permissoes'> | undefined> {
      const [row] = await runOnPrisma(db, PERFIL_TRAVAR_COMPARTILHADO, [id]);
      return row;
    },

    /** Locks the row against concurrent changes and assignments; undefined when it does not exist. */
    async lockForUpdate(id: string): Promise<Pick<PerfilDeAcesso, 'id' | 'permissoes'> | undefined> {
      const [row] = await runOnPrisma(db, PERFIL_TRAVAR, [id]);
      return row;
    },

    create: (data: Prisma.PerfilDeAcessoCreateInput) => db.perfilDeAcesso.create({ data }),

    update: (id: string, data: Prisma.PerfilDeAcessoUpdateInput) => db.perfilDeAcesso.update({ where: { id }, data }),

    /** How many live accesses hold the profile. */
    emUso: (id: string) => db.acesso.count({ where: { perfilDeAcessoId: id, excluidoEm: null } }),

    /** Deleted accesses keep their record, but not a link to a profile about to disappear. */
    async unlinkDeleted(id: string): Promise<void> {
      await db.acesso.updateMany({
        where: { perfilDeAcessoId: id, excluidoEm: { not: null } },
        data: { perfilDeAcessoId: null },
      });
    },

    /**
     * Deletes the profile unless a live access holds it, in one statement. Call it holding the
     * row lock (lockForUpdate): no assignment is then in flight, and the statement's snapshot,
     * taken after the lock, sees every committed one. Returns whether it was deleted.
     */
    async deleteIfUnused(id: string): Promise<boolean> {
      const deleted = await executeOnPrisma(db, PERFIL_EXCLUIR_SEM_USO, [id]);
      return deleted > 0;
    },
  };
}

export type PerfisRepository = ReturnType<typeof perfisRepository>;
