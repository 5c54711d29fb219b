import { type PageRequest, skipTake } from '@hub/http';
import type { Db } from '../../db';
import type { Prisma } from '../../generated/prisma/client';
import { likeLiteral } from '@hub/database';
import { FILTRO_MAX } from '../../schemas';

export interface FiltroDeVersoes {
  tipo_de_evento_id?: string;
  tipo_de_evento_nome?: string;
  busca?: string;
  versao?: number;
  ativa?: boolean;
}

const comTipo = { tipoDeEvento: { select: { nome: true } } } as const;
const ordem: Prisma.VersaoDeEsquemaOrderByWithRelationInput[] = [{ tipoDeEvento: { nome: 'asc' } }, { versao: 'asc' }];

function where(filtro: FiltroDeVersoes): Prisma.VersaoDeEsquemaWhereInput {
  const tipo: Prisma.TipoDeEventoWhereInput = {
    ...(filtro.tipo_de_evento_nome ? { nome: filtro.tipo_de_evento_nome } : {}),
    ...(filtro.busca ? { nome: { contains: likeLiteral(filtro.busca), mode: 'insensitive' } } : {}),
  };
  return {
    ...(filtro.tipo_de_evento_id ? { tipoDeEventoId: filtro.tipo_de_evento_id } : {}),
    ...(Object.keys(tipo).length ? { tipoDeEvento: tipo } : {}),
    ...(filtro.versao === undefined ? {} : { versao: filtro.versao }),
    ...(filtro.ativa === undefined ? {} : { ativa: filtro.ativa }),
  };
}

export function versoesRepository(db: Db) {
  return {
    async listar(filtro: FiltroDeVersoes, page: PageRequest) {
      const [itens, total] = await Promise.all([
        db.versaoDeEsquema.findMany({ where: where(filtro), include: comTipo, orderBy: ordem, ...skipTake(page) }),
        db.versaoDeEsquema.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    async autocomplete(filtro: FiltroDeVersoes, page: PageRequest) {
      const [itens, total] = await Promise.all([
        db.versaoDeEsquema.findMany({
          where: where(filtro),
          select: { id: true, tipoDeEventoId: true, versao: true, ...comTipo },
          orderBy: ordem,
          ...skipTake(page),
        }),
        db.versaoDeEsquema.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    filtrar: (filtro: FiltroDeVersoes) =>
      db.versaoDeEsquema.findMany({ where: where(filtro), include: comTipo, orderBy: ordem, take: FILTRO_MAX }),
    buscar: (id: string) => db.versaoDeEsquema.findUnique({ where: { id }, include: comTipo }),
    buscarPorNumero: (tipoDeEventoId: string, versao: number) =>
      db.versaoDeEsquema.findUnique({ where: { tipoDeEventoId_versao: { tipoDeEventoId, versao } }, include: comTipo }),
    buscarPorNomeDoTipo: (nome: string, versao: number) =>
      db.versaoDeEsquema.findFirst({ where: { versao, tipoDeEvento: { nome } }, include: comTipo }),

    /**
     * Creates the next version of a type: the type's row is locked for the transaction, so two
     * creations at once get 1 and 2, never the same number (the unique key backs this up).
     * Undefined when the type does not exist.
     */
    criarProxima(data: {
      id: string;
      tipoDeEventoId: string;
      esquema: Prisma.InputJsonValue;
      descricao: string | null;
      agora: Date;
    }) {
      return db.$transaction(async (tx) => {
        const locked = await tx.$queryRaw<
          { id: string }[]
        >`select id from tipo_de_evento where id = ${data.tipoDeEventoId}::uuid for update`;
        if (locked.length === 0) return undefined;
        const { _max } = await tx.versaoDeEsquema.aggregate({
          where: { tipoDeEventoId: data.tipoDeEventoId },
          _max: { versao: true },
        });
        return tx.versaoDeEsquema.create({
          data: {
            id: data.id,
            tipoDeEventoId: data.tipoDeEventoId,
            versao: (_max.versao ?? 0) + 1,
            esquema: data.esquema,
            descricao: data.descricao,
            ativa: true,
            criadoEm: data.agora,
            atualizadoEm: data.agora,
          },
          include: comTipo,
        });
      });
    },
    atualizar: (id: string, data: Prisma.VersaoDeEsquemaUncheckedUpdateInput) =>
      db.versaoDeEsquema.update({ where: { id }, data, include: comTipo }),
  };
}
export type VersoesRepository = ReturnType<typeof versoesRepository>;
export type VersaoComTipo = NonNullable<Awaited<ReturnType<VersoesRepository['buscar']>>>;
