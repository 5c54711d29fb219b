import { type SqlPool, statement } from '@hub/database';
import { COLUNAS_DA_PERDIDA, type Final, type Perdida, type Prazos, TRABALHO_DAS_MARCADAS } from './linhas';

export const ENTREGA_RECOLHER_PERDIDAS = statement<Perdida>({
  name: 'entrega_recolher_perdidas',
  parameters: ['int4', 'int4', 'int4', 'int4'],
  columns: COLUNAS_DA_PERDIDA,
  text: `with alvo as (
      select e.id from entrega_nao_concluida q join entrega e on e.id = q.entrega_id
      where q.fase = 'fila' and e.situacao in ('pendente', 'aguardando_nova_tentativa', 'em_andamento')
        -- waiting for its entity's turn (its copy is due at 'infinity': never met here anyway)
        and not e.em_espera
        -- proxima_tentativa_em is never after the others: the queue's index by due time
        -- (entrega_nao_concluida_vencimento, a copy of it) narrows first
        and q.proxima_tentativa_em < now() - $1::int * interval '1 millisecond'
        and greatest(e.proxima_tentativa_em, e.retorno_ate,
                     case when e.situacao = 'em_andamento'
                          then coalesce(e.reivindicada_ate, e.atualizada_em + $4::int * interval '1 millisecond') end)
            < now() - $1::int * interval '1 millisecond'
        -- a held destination's jobs (paused, or its circuit not closed) are waiting on purpose, in a
        -- delay queue or its own queue; an isolated one's jobs not claimed wait behind its backlog in
        -- its own queue (a claim's lease that ended is still a dead worker's), and for a while after
        -- it went back they come from it to the shared queue
        and not exists (select 1 from destino d
                        where d.origem = origem_da_url(e.url_de_destino)
                          and (d.pausado or d.retomado_em > now() - $2::int * interval '1 millisecond'
                               or d.circuito <> 'fechado'
                               or d.circuito_desde > now() - $2::int * interval '1 millisecond'
                               or (e.situacao <> 'em_andamento'
                                   and (d.isolamento is not null
                                        or d.isolamento_desde > now() - $2::int * interval '1 millisecond'))))
      order by q.proxima_tentativa_em
      limit $3::int
      for update of e skip locked
    ),
    marcadas as (
      update entrega e set proxima_tentativa_em = now(), atualizada_em = now(),
        -- the dead claim's lease ends now: the job sent again takes it over
        reivindicada_ate = case when e.situacao = 'em_andamento' then now() - interval '1 millisecond' end
      from alvo where e.id = alvo.id
      returning e.id, e.evento_id, e.assinatura_id, e.url_de_destino, e.tentativas_no_ciclo_atual, e.ultimo_erro,
                e.sequencia
    )
    ${TRABALHO_DAS_MARCADAS}`,
});

export const ENTREGA_PASSAR_A_VEZ = statement<Perdida>({
  name: 'entrega_passar_a_vez',
  parameters: ['jsonb'],
  // liberar_seguintes (migration 020) returns it as a bigint, which node-postgres gives as text too.
  columns: { ...COLUNAS_DA_PERDIDA, sequencia: 'int8' },
  text: 'select * from liberar_seguintes($1::jsonb)',
});

export const ENTREGA_RECOLHER_VEZES_PERDIDAS = statement<Perdida>({
  name: 'entrega_recolher_vezes_perdidas',
  parameters: ['int4'],
  // liberar_seguintes (migration 020) returns it as a bigint, which node-postgres gives as text too.
  columns: { ...COLUNAS_DA_PERDIDA, sequencia: 'int8' },
  text: `select * from liberar_seguintes((
    select coalesce(jsonb_agg(jsonb_build_object('assinatura_id', c.assinatura_id, 'entidade_id', c.entidade_id,
                                                 'sequencia', c.pronta)), '[]'::jsonb)
      from (select c.assinatura_id, c.entidade_id, c.pronta from sequencia_de_entidade c
             where c.pronta <= c.ultima
               and not exists (select 1 from entrega e
                                where e.assinatura_id = c.assinatura_id and e.entidade_id = c.entidade_id
                                  and e.sequencia = c.pronta
                                  and e.situacao not in ('concluida', 'fila_de_erro', 'cancelada'))
             limit $1::int) c))`,
});

/** The sweeper's statements and ordered delivery's turn (`varreduraJob`, `PassagemDaVez`): see `entregasRepository`. */
export function varreduraSql(sql: SqlPool, prazos: Prazos) {
  return {
    /**
     * Deliveries whose job seems lost: not final, and `idadeMs` past the latest moment their job could
     * still come back — its own expiry (proxima_tentativa_em), the end of its delay step
     * (retorno_ate: it waits behind longer messages at the head of its queue), the lease of the claim
     * of an em_andamento one (its worker died) — and not to a destination paused or with its circuit
     * not closed, or resumed (or closed) less than `retomadaMs` ago (its jobs still cycle through the
     * pause's delay queue). Taken with SKIP LOCKED
     * and stamped (proxima_tentativa_em, atualizada_em = now), so another sweeper neither waits for
     * them nor sends them too.
     */
    recolherPerdidas: (idadeMs: number, retomadaMs: number, limite: number) =>
      sql.run(ENTREGA_RECOLHER_PERDIDAS, [idadeMs, retomadaMs, limite, prazos.reivindicacaoMs]),

    /**
     * Passes the turn of each entity whose ordered delivery became final to its next delivery
     * (liberar_seguintes, migration 020: the chain's row locked first, then read afresh); the
     * deliveries it released, with what rebuilding their jobs needs, for the caller to publish.
     * Harmless twice: a turn already passed is not passed again.
     */
    passarAVez: (finais: Final[]) => sql.run(ENTREGA_PASSAR_A_VEZ, [JSON.stringify(finais)]),

    /**
     * The sweeper's side of ordered delivery: chains whose turn sits on a delivery that is final (or
     * gone: erased by retention) because the process that finished it died before passing the turn,
     * or finished it without passing it (a hub-api path). Their turn is passed now, as `passarAVez`.
     */
    recolherVezesPerdidas: (limite: number) => sql.run(ENTREGA_RECOLHER_VEZES_PERDIDAS, [limite]),
  };
}
