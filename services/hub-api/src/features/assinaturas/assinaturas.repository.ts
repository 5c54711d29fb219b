import { type PageRequest, skipTake } from '@hub/http';
import type { DbClient } from '../../db';
import type { Prisma } from '@hub/hub-data';
import { likeLiteral, runOnPrisma } from '@hub/database';
import { ASSINATURA_CANCELAR_ENTREGAS } from './assinaturas.sql';
import { FILTRO_MAX } from '../../schemas';

export interface FiltroDeAssinaturas {
  aplicativo_assinante_id?: string;
  tipo_de_evento_id?: string;
  versao_do_esquema?: number;
  ativa?: boolean;
  busca?: string;
}

const comNomes = {
  aplicativoAssinante: { select: { nome: true } },
  versao: { select: { tipoDeEvento: { select: { nome: true } } } },
} as const;
const ordem: Prisma.AssinaturaOrderByWithRelationInput[] = [
  { versao: { tipoDeEvento: { nome: 'asc' } } },
  { versaoDoEsquema: 'asc' },
  { criadoEm: 'asc' },
  { id: 'asc' },
];

function where(filtro: FiltroDeAssinaturas): Prisma.AssinaturaWhereInput {
  const busca = filtro.busca;
  return {
    excluidaEm: null,
    ...(filtro.aplicativo_assinante_id ? { aplicativoAssinanteId: filtro.aplicativo_assinante_id } : {}),
    ...(filtro.tipo_de_evento_id ? { tipoDeEventoId: filtro.tipo_de_evento_id } : {}),
    ...(filtro.versao_do_esquema === undefined ? {} : { versaoDoEsquema: filtro.versao_do_esquema }),
    ...(filtro.ativa === undefined ? {} : { ativa: filtro.ativa }),
    ...(busca
      ? {
          OR: [
            { urlDeDestino: { contains: likeLiteral(busca), mode: 'insensitive' } },
            { aplicativoAssinante: { nome: { contains: likeLiteral(busca), mode: 'insensitive' } } },
            { versao: { tipoDeEvento: { nome: { contains: likeLiteral(busca), mode: 'insensitive' } } } },
          ],
        }
      : {}),
  };
}

/** Every function takes the client or a transaction (`cliente`, the base client when absent). */
export function assinaturasRepository(db: DbClient) {
  return {
    async listar(filtro: FiltroDeAssinaturas, page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.assinatura.findMany({ where: where(filtro), include: comNomes, orderBy: ordem, ...skipTake(page) }),
        cliente.assinatura.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    filtrar: (filtro: FiltroDeAssinaturas, cliente: DbClient = db) =>
      cliente.assinatura.findMany({ where: where(filtro), include: comNomes, orderBy: ordem, take: FILTRO_MAX }),
    /** Whether the subscription is the application's, deleted or not (its deliveries stay the application's). */
    doAssinante: async (id: string, aplicativoAssinanteId: string, cliente: DbClient = db) =>
      (await cliente.assinatura.count({ where: { id, aplicativoAssinanteId } })) > 0,
    /** A deleted subscription is not found. */
    buscar: (id: string, cliente: DbClient = db) =>
      cliente.assinatura.findFirst({ where: { id, excluidaEm: null }, include: comNomes }),
    criar: (data: Prisma.AssinaturaUncheckedCreateInput, cliente: DbClient = db) =>
      cliente.assinatura.create({ data, include: comNomes }),
    atualizar: (id: string, data: Prisma.AssinaturaUncheckedUpdateInput, cliente: DbClient = db) =>
      cliente.assinatura.update({ where: { id }, data, include: comNomes }),
    /** Logical deletion: the row stays for the deliveries that refer to it. */
    excluir: (id: string, agora: Date, autoria: Prisma.AssinaturaUncheckedUpdateInput, cliente: DbClient = db) =>
      cliente.assinatura.update({
        where: { id },
        data: { excluidaEm: agora, ativa: false, atualizadoEm: agora, ...autoria },
      }),
    /**
     * Cancels what a deleted subscription would still receive or keep: its deliveries waiting for an
     * attempt (pendente, aguardando_nova_tentativa) or in the error queue (fila_de_erro). A job that
     * comes back for one finds it final and is dropped; em_andamento is left to the worker holding
     * it, whose attempt is recorded and whose next claim cancels it. Answers how many were in
     * fila_de_erro (their messages are the reconciliation's to remove).
     */
    async cancelarEntregas(id: string, agora: Date, cliente: DbClient = db): Promise<{ naFilaDeErro: number }> {
      const [linha] = await runOnPrisma(cliente, ASSINATURA_CANCELAR_ENTREGAS, [id, agora]);
      return { naFilaDeErro: linha?.na_fila_de_erro ?? 0 };
    },
  };
}
export type AssinaturasRepository = ReturnType<typeof assinaturasRepository>;
export type AssinaturaComNomes = NonNullable<Awaited<ReturnType<AssinaturasRepository['buscar']>>>;
