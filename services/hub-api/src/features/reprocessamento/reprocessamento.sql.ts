import { prismaStatement } from '@hub/database';
import type { Candidata } from './reprocessamento.repository';

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

/**
 * The deliveries a request covers, as `from` and `where`: in fila_de_erro since before $1 (when it
 * was made), among ids $2, of subscription $3, of type $4, created from $5 to $6, each filter
 * unset when null. Found through entrega_nao_concluida (alias c, migration 018: the error queue's
 * partial indexes by subscription, type and subscriber live there), each checked in entrega (en).
 * Prisma plans each run with its values, so a null filter's `is null` is decided then and the
 * index of a set one is used as before.
 */
const DO_ALCANCE = `from entrega_nao_concluida c join entrega en on en.id = c.entrega_id`;
const NO_ALCANCE = `c.fase = 'fila_de_erro' and en.situacao = 'fila_de_erro' and en.atualizada_em <= $1
     and ($2::uuid[] is null or c.entrega_id = any($2::uuid[]))
     and ($3::uuid is null or c.assinatura_id = $3::uuid)
     and ($4::uuid is null or c.tipo_de_evento_id = $4::uuid)
     and ($5::timestamptz is null or c.criada_em >= $5::timestamptz)
     and ($6::timestamptz is null or c.criada_em <= $6::timestamptz)`;
const PARAMETROS_DO_ALCANCE = ['timestamptz', 'uuid[]', 'uuid', 'uuid', 'timestamptz', 'timestamptz'];

/** How many deliveries a request covers ($1–$6). */
export const REPROCESSAMENTO_CONTAR = prismaStatement<{ n: number }>({
  name: 'reprocessamento_contar',
  text: `select count(*)::int as n ${DO_ALCANCE} where ${NO_ALCANCE}`,
  parameters: PARAMETROS_DO_ALCANCE,
  columns: { n: 'int4' },
});

/** The next $9 deliveries a request covers ($1–$6) after ($7, $8), oldest first, their rows locked. */
export const REPROCESSAMENTO_CANDIDATAS = prismaStatement<Candidata>({
  name: 'reprocessamento_candidatas',
  text: `select en.id::text, en.criada_em, (a.ativa and a.excluida_em is null) as assinatura_ativa
          ${DO_ALCANCE} join assinatura a on a.id = en.assinatura_id
         where ${NO_ALCANCE} and (c.criada_em, c.entrega_id) > ($7, $8::uuid)
         order by c.criada_em, c.entrega_id
         limit $9
           for update of en`,
  parameters: [...PARAMETROS_DO_ALCANCE, 'timestamptz', 'uuid', 'int8'],
  columns: { id: 'text', criada_em: 'timestamptz', assinatura_ativa: 'bool' },
});
