import { type PageRequest, skipTake } from '@hub/http';
import type { DbClient } from '../../db';
import type { Prisma } from '@hub/hub-data';
import { FILTRO_EVENTOS_MAX } from '../eventos/eventos.consultas';

export interface FiltroDeRecusados {
  codigo?: string;
  aplicativo_id?: string;
  tipo_de_evento_id?: string;
  desde?: Date;
  ate?: Date;
}

const ordem: Prisma.EventoRecusadoOrderByWithRelationInput[] = [{ recebidoEm: 'desc' }, { id: 'desc' }];

function where(filtro: FiltroDeRecusados): Prisma.EventoRecusadoWhereInput {
  return {
    ...(filtro.codigo ? { codigo: filtro.codigo } : {}),
    ...(filtro.aplicativo_id ? { aplicativoId: filtro.aplicativo_id } : {}),
    ...(filtro.tipo_de_evento_id ? { tipoDeEventoId: filtro.tipo_de_evento_id } : {}),
    ...(filtro.desde || filtro.ate
      ? { recebidoEm: { ...(filtro.desde ? { gte: filtro.desde } : {}), ...(filtro.ate ? { lte: filtro.ate } : {}) } }
      : {}),
  };
}

/** Refused publications, newest received first (their indexes lead with the filter, then recebido_em). */
export function eventosRecusadosRepository(db: DbClient) {
  return {
    async listar(page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.eventoRecusado.findMany({ orderBy: ordem, ...skipTake(page) }),
        cliente.eventoRecusado.count(),
      ]);
      return { itens, total };
    },
    filtrar: (filtro: FiltroDeRecusados, cliente: DbClient = db) =>
      cliente.eventoRecusado.findMany({ where: where(filtro), orderBy: ordem, take: FILTRO_EVENTOS_MAX }),
    buscar: (id: string, cliente: DbClient = db) => cliente.eventoRecusado.findUnique({ where: { id } }),
  };
}
export type EventosRecusadosRepository = ReturnType<typeof eventosRecusadosRepository>;
export type EventoRecusadoLinha = NonNullable<Awaited<ReturnType<EventosRecusadosRepository['buscar']>>>;
