import { type PageRequest, skipTake } from '@hub/http';
import type { Prisma } from '@hub/hub-data';
import type { DbClient } from '../../db';
import { FILTRO_EVENTOS_MAX } from '../eventos/eventos.consultas';
import type { FiltroDeTentativas } from './tentativas.schemas';

const ordem: Prisma.TentativaOrderByWithRelationInput[] = [{ iniciadaEm: 'desc' }, { id: 'desc' }];

function where(filtro: FiltroDeTentativas): Prisma.TentativaWhereInput {
  return {
    ...(filtro.entrega_id ? { entregaId: filtro.entrega_id } : {}),
    ...(filtro.assinatura_id ? { entrega: { assinaturaId: filtro.assinatura_id } } : {}),
    ...(filtro.sucesso !== undefined ? { sucesso: filtro.sucesso } : {}),
    ...(filtro.status_http !== undefined ? { statusHttp: filtro.status_http } : {}),
    ...(filtro.desde || filtro.ate
      ? { iniciadaEm: { ...(filtro.desde ? { gte: filtro.desde } : {}), ...(filtro.ate ? { lte: filtro.ate } : {}) } }
      : {}),
  };
}

/** Attempts of deliveries, newest started first (indexes lead with the filter, then iniciada_em). */
export function tentativasRepository(db: DbClient) {
  return {
    async listar(filtro: FiltroDeTentativas, page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.tentativa.findMany({ where: where(filtro), orderBy: ordem, ...skipTake(page) }),
        cliente.tentativa.count({ where: where(filtro) }),
      ]);
      return { itens, total };
    },
    filtrar: (filtro: FiltroDeTentativas, cliente: DbClient = db) =>
      cliente.tentativa.findMany({ where: where(filtro), orderBy: ordem, take: FILTRO_EVENTOS_MAX }),
    buscar: (id: string, cliente: DbClient = db) => cliente.tentativa.findUnique({ where: { id } }),
  };
}
export type TentativasRepository = ReturnType<typeof tentativasRepository>;
export type TentativaLinha = NonNullable<Awaited<ReturnType<TentativasRepository['buscar']>>>;
