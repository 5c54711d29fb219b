import type { PageRequest } from '@hub/http';
import { skipTake } from '@hub/http';
import type { DbClient } from '../../db';
import type { Prisma } from '../../generated/prisma/client';
import { likeLiteral } from '@hub/database';

export interface FiltroDeAplicativos {
  busca?: string;
  ativo?: boolean;
}

function where(filtro: FiltroDeAplicativos): Prisma.AplicativoWhereInput {
  return {
    ...(filtro.ativo === undefined ? {} : { ativo: filtro.ativo }),
    ...(filtro.busca
      ? {
          OR: [
            { nome: { contains: likeLiteral(filtro.busca), mode: 'insensitive' } },
            { clientId: { contains: likeLiteral(filtro.busca), mode: 'insensitive' } },
          ],
        }
      : {}),
  };
}

export function aplicativosRepository(db: DbClient) {
  return {
    async listar(filtro: FiltroDeAplicativos, page: PageRequest) {
      const [itens, total] = await Promise.all([
        db.aplicativo.findMany({ where: where(filtro), orderBy: [{ nome: 'asc' }, { id: 'asc' }], ...skipTake(page) }),
        db.aplicativo.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    buscar: (id: string) => db.aplicativo.findUnique({ where: { id } }),
    buscarPorClientId: (clientId: string) => db.aplicativo.findUnique({ where: { clientId } }),
    criar: (data: Prisma.AplicativoUncheckedCreateInput) => db.aplicativo.create({ data }),
    atualizar: (id: string, data: Prisma.AplicativoUncheckedUpdateInput) =>
      db.aplicativo.update({ where: { id }, data }),
  };
}
export type AplicativosRepository = ReturnType<typeof aplicativosRepository>;
