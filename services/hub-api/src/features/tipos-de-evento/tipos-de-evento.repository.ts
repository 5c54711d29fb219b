import { type PageRequest, skipTake } from '@hub/http';
import type { DbClient } from '../../db';
import type { Prisma } from '../../generated/prisma/client';
import { likeLiteral } from '@hub/database';
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

export function tiposRepository(db: DbClient) {
  return {
    async listar(filtro: FiltroDeTipos, page: PageRequest) {
      const [itens, total] = await Promise.all([
        db.tipoDeEvento.findMany({ where: where(filtro), include: comAplicativo, orderBy: ordem, ...skipTake(page) }),
        db.tipoDeEvento.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    async autocomplete(filtro: FiltroDeTipos, page: PageRequest) {
      const [itens, total] = await Promise.all([
        db.tipoDeEvento.findMany({
          where: where(filtro),
          select: { id: true, nome: true },
          orderBy: ordem,
          ...skipTake(page),
        }),
        db.tipoDeEvento.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    filtrar: (filtro: FiltroDeTipos) =>
      db.tipoDeEvento.findMany({ where: where(filtro), include: comAplicativo, orderBy: ordem, take: FILTRO_MAX }),
    buscar: (id: string) => db.tipoDeEvento.findUnique({ where: { id }, include: comAplicativo }),
    buscarPorNome: (nome: string) => db.tipoDeEvento.findUnique({ where: { nome }, include: comAplicativo }),
    criar: (data: Prisma.TipoDeEventoUncheckedCreateInput) => db.tipoDeEvento.create({ data, include: comAplicativo }),
    atualizar: (id: string, data: Prisma.TipoDeEventoUncheckedUpdateInput) =>
      db.tipoDeEvento.update({ where: { id }, data, include: comAplicativo }),
    async referencias(id: string) {
      const [versoes, assinaturas] = await Promise.all([
        db.versaoDeEsquema.count({ where: { tipoDeEventoId: id } }),
        db.assinatura.count({ where: { tipoDeEventoId: id } }),
      ]);
      return { versoes, assinaturas };
    },
    excluir: (id: string) => db.tipoDeEvento.delete({ where: { id } }),
  };
}
export type TiposRepository = ReturnType<typeof tiposRepository>;
export type TipoComAplicativo = NonNullable<Awaited<ReturnType<TiposRepository['buscar']>>>;
