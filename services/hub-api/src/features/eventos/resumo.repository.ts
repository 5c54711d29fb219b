import type { DbClient } from '../../db';
import { Prisma } from '@hub/hub-data';

export interface TotaisDaHora {
  hora: Date;
  eventos: number;
  recusados: number;
  entregas_concluidas: number;
  tentativas_com_falha: number;
}

/** The tallies of each hour in [desde, ate], their slices summed; hours with no row are absent. */
export const sqlPorHora = (desde: Date, ate: Date) => Prisma.sql`
        select hora,
               sum(eventos)::int as eventos,
               sum(recusados)::int as recusados,
               sum(entregas_concluidas)::int as entregas_concluidas,
               sum(tentativas_com_falha)::int as tentativas_com_falha
          from resumo_por_hora
         where hora between ${desde} and ${ate}
         group by hora`;

/**
 * The latency histograms of the hours in [desde, ate] (migration 021), their slices summed: one row
 * per hour and bucket that holds deliveries. At most 24 × 240 rows whatever the number of deliveries.
 */
export const sqlLatenciasPorHora = (desde: Date, ate: Date) => Prisma.sql`
        select hora, balde, sum(entregas)::int as entregas
          from resumo_latencia_por_hora
         where hora between ${desde} and ${ate}
         group by hora, balde`;

/**
 * The open deliveries by state, from entrega_nao_concluida (migration 018), so only the deliveries not
 * concluded are read, however many concluded ones exist: the queue's rows (one fase for three states)
 * with their situacao from entrega, the error queue's counted from its index alone.
 */
export const SQL_FILA = Prisma.sql`
        with fila as (
          select e.situacao from entrega_nao_concluida c join entrega e on e.id = c.entrega_id where c.fase = 'fila'
        )
        select (select count(*) from fila where situacao in ('pendente', 'em_andamento'))::int as pendentes,
               (select count(*) from fila where situacao = 'aguardando_nova_tentativa')::int as aguardando,
               (select count(*) from entrega_nao_concluida where fase = 'fila_de_erro')::int as erro`;

export const SQL_ATIVOS = Prisma.sql`
        select (select count(*) from aplicativo where ativo)::int as aplicativos,
               (select count(*) from tipo_de_evento where ativo)::int as tipos,
               (select count(*) from assinatura where ativa and excluida_em is null)::int as assinaturas`;

/** The summary's queries (contract §4.3 r4): hourly tallies and latencies, the open queue, active registrations. */
export function resumoRepository(db: DbClient) {
  return {
    porHora: (desde: Date, ate: Date, cliente: DbClient = db) =>
      cliente.$queryRaw<TotaisDaHora[]>(sqlPorHora(desde, ate)),
    latenciasPorHora: (desde: Date, ate: Date, cliente: DbClient = db) =>
      cliente.$queryRaw<{ hora: Date; balde: number; entregas: number }[]>(sqlLatenciasPorHora(desde, ate)),
    fila: async (cliente: DbClient = db) =>
      (await cliente.$queryRaw<[{ pendentes: number; aguardando: number; erro: number }]>(SQL_FILA))[0],
    ativos: async (cliente: DbClient = db) =>
      (await cliente.$queryRaw<[{ aplicativos: number; tipos: number; assinaturas: number }]>(SQL_ATIVOS))[0],
  };
}
export type ResumoRepository = ReturnType<typeof resumoRepository>;
