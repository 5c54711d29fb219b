import { type SqlPool, statement } from '@hub/database';
import {
  COLUNAS_DA_PERDIDA,
  type Pedido,
  type Perdida,
  type Prazos,
  type Reivindicada,
  TRABALHO_DAS_MARCADAS,
} from './linhas';

export const ENTREGA_REIVINDICAR = statement<Reivindicada>({
  name: 'entrega_reivindicar',
  parameters: ['json', 'int4', 'int4'],
  columns: {
    id: 'text',
    situacao: 'text',
    tentativas_no_ciclo_atual: 'int4',
    maximo_de_tentativas: 'int4',
    url_de_destino: 'text',
    ultimo_erro: 'text',
    sequencia: 'text',
    assinatura_id: 'text',
    entidade_id: 'text',
    formato: 'text',
  },
  text: `with p as (
      select * from json_to_recordset($1::json) as p(id uuid, token uuid, anterior uuid)
    ),
    alvo as (
      select e.id, p.token, a.url_de_destino as url, a.formato, (a.ativa and a.excluida_em is null) as viva,
             e.reivindicacoes_sem_tentativa as mortas,
             coalesce(e.situacao = 'em_andamento' and e.reivindicacao = p.anterior, false) as continua
      from entrega e
      join p on p.id = e.id
      join assinatura a on a.id = e.assinatura_id
      where e.id = any(array(select id from p))
        -- "not final", written as a negation so the planner looks rows up by id alone
        and e.situacao not in ('concluida', 'fila_de_erro', 'cancelada')
        -- an ordered delivery waiting for its turn has no job: a stray copy is dropped
        and not e.em_espera
        and (e.situacao <> 'aguardando_nova_tentativa' or e.proxima_tentativa_em <= now() + interval '1 second')
        and (e.situacao <> 'em_andamento' or e.reivindicacao = p.anterior
             or coalesce(e.reivindicada_ate, e.atualizada_em + $2::int * interval '1 millisecond') < now())
      order by e.id
      for update of e
    ),
    decisao as (
      select alvo.*, case when not alvo.viva then 'cancelada'
                          when not alvo.continua and alvo.mortas >= $3::int then 'fila_de_erro'
                          else 'em_andamento' end as situacao
      from alvo
    )
    update entrega e
    set situacao = d.situacao,
        ultimo_erro = case d.situacao
          when 'cancelada' then 'the subscription was switched off or deleted: delivery cancelled'
          when 'fila_de_erro' then 'poison job: its last ' || $3::int || ' claims ended with no attempt recorded (the worker died each time)'
          else e.ultimo_erro end,
        url_de_destino = case when d.viva then d.url else e.url_de_destino end,
        reivindicacao = case when d.situacao = 'em_andamento' then d.token end,
        reivindicada_ate = case when d.situacao = 'em_andamento' then now() + $2::int * interval '1 millisecond' end,
        reivindicacoes_sem_tentativa = case when d.situacao <> 'em_andamento' then 0
                                            when d.continua then e.reivindicacoes_sem_tentativa
                                            else e.reivindicacoes_sem_tentativa + 1 end,
        retorno_ate = null,
        atualizada_em = now()
    from decisao d
    -- the ids again, so the planner reaches e by its primary key rather than hashing the table
    where e.id = d.id and e.id = any(array(select id from p))
    returning e.id::text, e.situacao, e.tentativas_no_ciclo_atual, e.maximo_de_tentativas, e.url_de_destino,
              e.ultimo_erro, e.sequencia::text, e.assinatura_id::text, e.entidade_id, d.formato`,
});

export const ENTREGA_LIBERAR = statement<{ id: string }>({
  name: 'entrega_liberar',
  parameters: ['json'],
  columns: { id: 'text' },
  text: `update entrega e
    set situacao = case when e.tentativas_no_ciclo_atual = 0 then 'pendente' else 'aguardando_nova_tentativa' end,
        reivindicacao = null, reivindicada_ate = null, proxima_tentativa_em = now(), atualizada_em = now(),
        reivindicacoes_sem_tentativa = greatest(e.reivindicacoes_sem_tentativa - 1, 0)
    from json_to_recordset($1::json) as p(id uuid, token uuid)
    where e.id = p.id and e.situacao = 'em_andamento' and e.reivindicacao = p.token
    returning e.id::text`,
});

export const ENTREGA_ENVENENAR = statement<Perdida>({
  name: 'entrega_envenenar',
  parameters: ['uuid', 'uuid', 'text', 'int4'],
  columns: COLUNAS_DA_PERDIDA,
  text: `with alvo as (
      select e.id from entrega e
      where e.id = $1::uuid and e.situacao not in ('concluida', 'fila_de_erro', 'cancelada')
        and (e.situacao <> 'em_andamento' or e.reivindicacao = $2::uuid
             or coalesce(e.reivindicada_ate, e.atualizada_em + $4::int * interval '1 millisecond') < now())
      for update of e
    ),
    marcadas as (
      update entrega e
      set situacao = 'fila_de_erro', ultimo_erro = left($3::text, 2000), reivindicacao = null,
          reivindicada_ate = null, reivindicacoes_sem_tentativa = 0, atualizada_em = now()
      from alvo where e.id = alvo.id
      returning e.id, e.evento_id, e.assinatura_id, e.url_de_destino, e.tentativas_no_ciclo_atual, e.ultimo_erro,
                e.sequencia
    )
    ${TRABALHO_DAS_MARCADAS}`,
});

/** The claim's statements (`EtapaDeReivindicacao`, and the poison job's mark): see `entregasRepository`. */
export function reivindicacaoSql(sql: SqlPool, prazos: Prazos) {
  return {
    /**
     * Claims deliveries for an attempt, each for one job at a time: those not final become
     * em_andamento under the job's new token for the lease, or cancelada when their subscription was
     * switched off or deleted meanwhile, or fila_de_erro when their last claims all died with their
     * worker (a poison job). Not returned (their job is dropped, so a redelivery is harmless): final or
     * unknown deliveries; one held by another job's live claim (a redelivered copy while the first
     * worker still POSTs); one waiting for its next attempt that is not due yet (a stale copy). A
     * job that carries the token of the claim (back from a deferral or a retry) continues it; a lease
     * that ended (its worker died) is taken over. Each attempt goes to the subscription's url now.
     * Rows are locked in id order, so two workers claiming overlapping batches cannot deadlock; a
     * claim that waited for a lock is checked again against the row it then sees.
     */
    reivindicar: (pedidos: Pedido[]) =>
      sql.run(ENTREGA_REIVINDICAR, [JSON.stringify(pedidos), prazos.reivindicacaoMs, prazos.reivindicacoesAteVeneno]),

    /**
     * Gives claims back with no attempt made (the worker is stopping): each delivery waits again as
     * it did before its claim (pendente, or aguardando_nova_tentativa), due now, so its job, back in
     * the queue, is taken at once by any worker. Only the claim of the token given is released.
     */
    liberar: (posses: { id: string; token: string }[]) => sql.run(ENTREGA_LIBERAR, [JSON.stringify(posses)]),

    /**
     * A poison job (its message cannot be read, or it failed the handler on its last try): the
     * delivery goes to fila_de_erro with why, once, before its job goes to the error queue, unless
     * it is final already or another job holds a live claim on it. Gives what rebuilding its job
     * needs; nothing when no row changed.
     */
    envenenar: (id: string, token: string | null, erro: string) =>
      sql.run(ENTREGA_ENVENENAR, [id, token, erro, prazos.reivindicacaoMs]),
  };
}
