import { runOnPrisma } from '@hub/database';
import type { DbClient } from '../../db';
import { EVENTO_CONTADORES } from './contadores.sql';
import type { Contadores } from './eventos.schemas';

const ZERO: Contadores = {
  quantidade_de_entregas: 0,
  entregas_concluidas: 0,
  entregas_na_fila: 0,
  entregas_na_fila_de_erro: 0,
};

/**
 * The delivery counters of each event, from its deliveries' situacao (architecture §5), in one grouped
 * query over the entrega_evento_criada index: a page of events costs one round trip, not one per event.
 */
export async function contadoresDosEventos(db: DbClient, eventoIds: string[]): Promise<Map<string, Contadores>> {
  const contadores = new Map<string, Contadores>(eventoIds.map((id) => [id, { ...ZERO }]));
  if (eventoIds.length === 0) return contadores;
  const linhas = await runOnPrisma(db, EVENTO_CONTADORES, [eventoIds]);
  for (const linha of linhas) {
    contadores.set(linha.evento_id, {
      quantidade_de_entregas: linha.total,
      entregas_concluidas: linha.concluidas,
      entregas_na_fila: linha.na_fila,
      entregas_na_fila_de_erro: linha.na_fila_de_erro,
    });
  }
  return contadores;
}
