import type { DbClient } from '../../db';
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
  const linhas = await db.$queryRaw<
    { evento_id: string; total: number; concluidas: number; na_fila: number; na_fila_de_erro: number }[]
  >`
    select evento_id::text,
           count(*)::int as total,
           count(*) filter (where situacao = 'concluida')::int as concluidas,
           count(*) filter (where situacao in ('pendente', 'em_andamento', 'aguardando_nova_tentativa'))::int as na_fila,
           count(*) filter (where situacao = 'fila_de_erro')::int as na_fila_de_erro
    from entrega
    where evento_id = any(${eventoIds}::uuid[])
    group by evento_id`;
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
