import { type PageRequest, skipTake } from '@hub/http';
import type { DbClient, Tx } from '../../db';
import type { Prisma } from '@hub/hub-data';
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

/** Every function takes the client or a transaction (`cliente`, the base client when absent). */
export function versoesRepository(db: DbClient) {
  return {
    async listar(filtro: FiltroDeVersoes, page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.versaoDeEsquema.findMany({ where: where(filtro), include: comTipo, orderBy: ordem, ...skipTake(page) }),
        cliente.versaoDeEsquema.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    async autocomplete(filtro: FiltroDeVersoes, page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.versaoDeEsquema.findMany({
          where: where(filtro),
          select: { id: true, tipoDeEventoId: true, versao: true, ...comTipo },
          orderBy: ordem,
          ...skipTake(page),
        }),
        cliente.versaoDeEsquema.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    filtrar: (filtro: FiltroDeVersoes, cliente: DbClient = db) =>
      cliente.versaoDeEsquema.findMany({ where: where(filtro), include: comTipo, orderBy: ordem, take: FILTRO_MAX }),
    buscar: (id: string, cliente: DbClient = db) =>
      cliente.versaoDeEsquema.findUnique({ where: { id }, include: comTipo }),
    buscarPorNumero: (tipoDeEventoId: string, versao: number, cliente: DbClient = db) =>
      cliente.versaoDeEsquema.findUnique({
        where: { tipoDeEventoId_versao: { tipoDeEventoId, versao } },
        include: comTipo,
      }),
    buscarPorNomeDoTipo: (nome: string, versao: number, cliente: DbClient = db) =>
      cliente.versaoDeEsquema.findFirst({ where: { versao, tipoDeEvento: { nome } }, include: comTipo }),

    /**
     * The number the type's next version takes. Only meaningful while the type's row is locked
     * (tiposRepository.travar) in the same transaction; the unique key (type, number) backs it up.
     */
    async proximoNumero(tipoDeEventoId: string, tx: Tx): Promise<number> {
      const { _max } = await tx.versaoDeEsquema.aggregate({ where: { tipoDeEventoId }, _max: { versao: true } });
      return (_max.versao ?? 0) + 1;
    },
    /** The type's latest version (the one a new version is checked against), or null. */
    ultima: (tipoDeEventoId: string, cliente: DbClient = db) =>
      cliente.versaoDeEsquema.findFirst({ where: { tipoDeEventoId }, orderBy: { versao: 'desc' }, include: comTipo }),
    criar: (data: Prisma.VersaoDeEsquemaUncheckedCreateInput, cliente: DbClient = db) =>
      cliente.versaoDeEsquema.create({ data, include: comTipo }),
    atualizar: (id: string, data: Prisma.VersaoDeEsquemaUncheckedUpdateInput, cliente: DbClient = db) =>
      cliente.versaoDeEsquema.update({ where: { id }, data, include: comTipo }),
  };
}
export type VersoesRepository = ReturnType<typeof versoesRepository>;
export type VersaoComTipo = NonNullable<Awaited<ReturnType<VersoesRepository['buscar']>>>;
