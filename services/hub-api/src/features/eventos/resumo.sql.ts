import { prismaStatement } from '@hub/database';
import type { TotaisDaHora } from './resumo.repository';

// The summary's statements (contract §4.3 r4), run on Prisma, checked by publicacao/sql.test.ts.

/** The tallies of each hour in [$1, $2], their slices summed; hours with no row are absent. */
export const RESUMO_POR_HORA = prismaStatement<TotaisDaHora>({
  name: 'resumo_por_hora',
  text: `select hora,
               sum(eventos)::int as eventos,
               sum(recusados)::int as recusados,
               sum(entregas_concluidas)::int as entregas_concluidas,
               sum(tentativas_com_falha)::int as tentativas_com_falha
          from resumo_por_hora
         where hora between $1 and $2
         group by hora`,
  parameters: ['timestamptz', 'timestamptz'],
  columns: {
    hora: 'timestamptz',
    eventos: 'int4',
    recusados: 'int4',
    entregas_concluidas: 'int4',
    tentativas_com_falha: 'int4',
  },
});

/**
 * The latency histograms of the hours in [$1, $2] (migration 021), their slices summed: one row
 * per hour and bucket that holds deliveries. At most 24 × 240 rows whatever the number of deliveries.
 */
export const RESUMO_LATENCIAS_POR_HORA = prismaStatement<{ hora: Date; balde: number; entregas: number }>({
  name: 'resumo_latencias_por_hora',
  text: `select hora, balde, sum(entregas)::int as entregas
          from resumo_latencia_por_hora
         where hora between $1 and $2
         group by hora, balde`,
  parameters: ['timestamptz', 'timestamptz'],
  columns: { hora: 'timestamptz', balde: 'int4', entregas: 'int4' },
});

/**
 * The open deliveries by state, from entrega_nao_concluida (migration 018), so only the deliveries not
 * concluded are read, however many concluded ones exist: the queue's rows (one fase for three states)
 * with their situacao from entrega, the error queue's counted from its index alone.
 */
export const RESUMO_FILA = prismaStatement<{ pendentes: number; aguardando: number; erro: number }>({
  name: 'resumo_fila',
  text: `with fila as (
          select e.situacao from entrega_nao_concluida c join entrega e on e.id = c.entrega_id where c.fase = 'fila'
        )
        select (select count(*) from fila where situacao in ('pendente', 'em_andamento'))::int as pendentes,
               (select count(*) from fila where situacao = 'aguardando_nova_tentativa')::int as aguardando,
               (select count(*) from entrega_nao_concluida where fase = 'fila_de_erro')::int as erro`,
  parameters: [],
  columns: { pendentes: 'int4', aguardando: 'int4', erro: 'int4' },
});

/** The active applications, event types and subscriptions. */
export const RESUMO_ATIVOS = prismaStatement<{ aplicativos: number; tipos: number; assinaturas: number }>({
  name: 'resumo_ativos',
  text: `select (select count(*) from aplicativo where ativo)::int as aplicativos,
               (select count(*) from tipo_de_evento where ativo)::int as tipos,
               (select count(*) from assinatura where ativa and excluida_em is null)::int as assinaturas`,
  parameters: [],
  columns: { aplicativos: 'int4', tipos: 'int4', assinaturas: 'int4' },
});

/**
 * total of GET /evento: every stored event, the sum of the hourly counts the triggers on evento
 * keep exact (a few hundred small rows, not a count of the events; eventos.repository.ts).
 */
export const EVENTO_TOTAL = prismaStatement<{ total: number }>({
  name: 'evento_total',
  text: 'select coalesce(sum(eventos_guardados), 0)::int as total from resumo_por_hora',
  parameters: [],
  columns: { total: 'int4' },
});
