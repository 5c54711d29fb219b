import { prismaStatement } from '@hub/database';

// The subscriptions' statements of fixed text, run on Prisma (runOnPrisma), checked by publicacao/sql.test.ts.

/** Locks application $1's row until the transaction ends (its subscriptions counted one writer at a time). */
export const APLICATIVO_TRAVAR = prismaStatement({
  name: 'aplicativo_travar',
  text: 'select from aplicativo where id = $1::uuid for update',
  parameters: ['uuid'],
  columns: {},
});

/**
 * Cancels subscription $1's deliveries waiting for an attempt or in the error queue, at $2; how many
 * were in fila_de_erro. Found among the deliveries not concluded (entrega_nao_concluida).
 */
export const ASSINATURA_CANCELAR_ENTREGAS = prismaStatement<{ na_fila_de_erro: number }>({
  name: 'assinatura_cancelar_entregas',
  text: `with alvo as (
          select e.id, e.situacao from entrega_nao_concluida c join entrega e on e.id = c.entrega_id
           where c.assinatura_id = $1::uuid and c.fase in ('fila', 'fila_de_erro')
             and e.situacao in ('pendente', 'aguardando_nova_tentativa', 'fila_de_erro')
           order by e.id
           for update of e
        ),
        canceladas as (
          update entrega e
             set situacao = 'cancelada', ultimo_erro = 'the subscription was deleted: delivery cancelled',
                 reivindicacao = null, reivindicada_ate = null, reivindicacoes_sem_tentativa = 0,
                 retorno_ate = null, atualizada_em = $2
            from alvo where e.id = alvo.id
          returning alvo.situacao
        )
        select count(*) filter (where situacao = 'fila_de_erro')::int as na_fila_de_erro from canceladas`,
  parameters: ['uuid', 'timestamptz'],
  columns: { na_fila_de_erro: 'int4' },
});
