import { prismaStatement } from '@hub/database';

/** The oldest reprocessing request not yet final whose row no other runner holds, locked. */
export const REPROCESSAMENTO_REIVINDICAR = prismaStatement<{ id: string }>({
  name: 'reprocessamento_reivindicar',
  text: `select id::text from solicitacao_de_reprocessamento
         where situacao in ('pendente', 'em_andamento')
         order by criada_em, id limit 1
           for update skip locked`,
  parameters: [],
  columns: { id: 'text' },
});
