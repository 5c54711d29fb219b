import { prismaStatement } from '@hub/database';

/** The delivery counters of events $1, one grouped query over the entrega_evento_criada index. */
export const EVENTO_CONTADORES = prismaStatement<{
  evento_id: string;
  total: number;
  concluidas: number;
  na_fila: number;
  na_fila_de_erro: number;
}>({
  name: 'evento_contadores',
  text: `select evento_id::text,
           count(*)::int as total,
           count(*) filter (where situacao = 'concluida')::int as concluidas,
           count(*) filter (where situacao in ('pendente', 'em_andamento', 'aguardando_nova_tentativa'))::int as na_fila,
           count(*) filter (where situacao = 'fila_de_erro')::int as na_fila_de_erro
    from entrega
    where evento_id = any($1::uuid[])
    group by evento_id`,
  parameters: ['uuid[]'],
  columns: { evento_id: 'text', total: 'int4', concluidas: 'int4', na_fila: 'int4', na_fila_de_erro: 'int4' },
});
