import type { DbClient } from '../../db';
import { runOnPrisma } from '@hub/database';
import { RESUMO_ATIVOS, RESUMO_FILA, RESUMO_LATENCIAS_POR_HORA, RESUMO_POR_HORA } from './resumo.sql';

export interface TotaisDaHora {
  hora: Date;
  eventos: number;
  recusados: number;
  entregas_concluidas: number;
  tentativas_com_falha: number;
}

/** The summary's queries (contract §4.3 r4): hourly tallies and latencies, the open queue, active registrations. */
export function resumoRepository(db: DbClient) {
  return {
    porHora: (desde: Date, ate: Date, cliente: DbClient = db) => runOnPrisma(cliente, RESUMO_POR_HORA, [desde, ate]),
    latenciasPorHora: (desde: Date, ate: Date, cliente: DbClient = db) =>
      runOnPrisma(cliente, RESUMO_LATENCIAS_POR_HORA, [desde, ate]),
    fila: async (cliente: DbClient = db) => (await runOnPrisma(cliente, RESUMO_FILA))[0]!,
    ativos: async (cliente: DbClient = db) => (await runOnPrisma(cliente, RESUMO_ATIVOS))[0]!,
  };
}
export type ResumoRepository = ReturnType<typeof resumoRepository>;
