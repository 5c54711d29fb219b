import type { PageRequest } from '@hub/http';
import { skipTake } from '@hub/http';
import type { DbClient } from '../../db';
import type { Prisma } from '@hub/hub-data';
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

/** Every function takes the client or a transaction (`cliente`, the base client when absent). */
export function aplicativosRepository(db: DbClient) {
  return {
    async listar(filtro: FiltroDeAplicativos, page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.aplicativo.findMany({
          where: where(filtro),
          orderBy: [{ nome: 'asc' }, { id: 'asc' }],
          ...skipTake(page),
        }),
        cliente.aplicativo.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    buscar: (id: string, cliente: DbClient = db) => cliente.aplicativo.findUnique({ where: { id } }),
    buscarPorClientId: (clientId: string, cliente: DbClient = db) =>
      cliente.aplicativo.findUnique({ where: { clientId } }),
    criar: (data: Prisma.AplicativoUncheckedCreateInput, cliente: DbClient = db) => cliente.aplicativo.create({ data }),
    atualizar: (id: string, data: Prisma.AplicativoUncheckedUpdateInput, cliente: DbClient = db) =>
      cliente.aplicativo.update({ where: { id }, data }),
  };
}
export type AplicativosRepository = ReturnType<typeof aplicativosRepository>;
