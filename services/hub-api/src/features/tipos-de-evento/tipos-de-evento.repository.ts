import { type PageRequest, skipTake } from '@hub/http';
import type { DbClient, Tx } from '../../db';
import type { Prisma } from '@hub/hub-data';
import { likeLiteral, runOnPrisma } from '@hub/database';
import { TIPO_TRAVAR } from './tipos-de-evento.sql';
import { FILTRO_MAX } from '../../schemas';

export interface FiltroDeTipos {
  busca?: string;
  aplicativo_id?: string;
  ativo?: boolean;
}

const comAplicativo = { aplicativo: { select: { nome: true } } } as const;
const ordem: Prisma.TipoDeEventoOrderByWithRelationInput[] = [{ nome: 'asc' }];

function where(filtro: FiltroDeTipos): Prisma.TipoDeEventoWhereInput {
  return {
    ...(filtro.busca ? { nome: { contains: likeLiteral(filtro.busca), mode: 'insensitive' } } : {}),
    ...(filtro.aplicativo_id ? { aplicativoId: filtro.aplicativo_id } : {}),
    ...(filtro.ativo === undefined ? {} : { ativo: filtro.ativo }),
  };
}

/** Every function takes the client or a transaction (`cliente`, the base client when absent). */
export function tiposRepository(db: DbClient) {
  return {
    async listar(filtro: FiltroDeTipos, page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.tipoDeEvento.findMany({
          where: where(filtro),
          include: comAplicativo,
          orderBy: ordem,
          ...skipTake(page),
        }),
        cliente.tipoDeEvento.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    async autocomplete(filtro: FiltroDeTipos, page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.tipoDeEvento.findMany({
          where: where(filtro),
          select: { id: true, nome: true },
          orderBy: ordem,
          ...skipTake(page),
        }),
        cliente.tipoDeEvento.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    filtrar: (filtro: FiltroDeTipos, cliente: DbClient = db) =>
      cliente.tipoDeEvento.findMany({ where: where(filtro), include: comAplicativo, orderBy: ordem, take: FILTRO_MAX }),
    buscar: (id: string, cliente: DbClient = db) =>
      cliente.tipoDeEvento.findUnique({ where: { id }, include: comAplicativo }),
    /**
     * Locks the type's row until the transaction ends: creating its next version and deleting it
     * take this lock, so they never interleave. False when the type does not exist.
     */
    async travar(id: string, tx: Tx): Promise<boolean> {
      const rows = await runOnPrisma(tx, TIPO_TRAVAR, [id]);
      return rows.length > 0;
    },
    buscarPorNome: (nome: string, cliente: DbClient = db) =>
      cliente.tipoDeEvento.findUnique({ where: { nome }, include: comAplicativo }),
    criar: (data: Prisma.TipoDeEventoUncheckedCreateInput, cliente: DbClient = db) =>
      cliente.tipoDeEvento.create({ data, include: comAplicativo }),
    atualizar: (id: string, data: Prisma.TipoDeEventoUncheckedUpdateInput, cliente: DbClient = db) =>
      cliente.tipoDeEvento.update({ where: { id }, data, include: comAplicativo }),
    async referencias(id: string, cliente: DbClient = db) {
      const [versoes, assinaturas] = await Promise.all([
        cliente.versaoDeEsquema.count({ where: { tipoDeEventoId: id } }),
        cliente.assinatura.count({ where: { tipoDeEventoId: id } }),
      ]);
      return { versoes, assinaturas };
    },
    excluir: (id: string, cliente: DbClient = db) => cliente.tipoDeEvento.delete({ where: { id } }),
  };
}
export type TiposRepository = ReturnType<typeof tiposRepository>;
export type TipoComAplicativo = NonNullable<Awaited<ReturnType<TiposRepository['buscar']>>>;
