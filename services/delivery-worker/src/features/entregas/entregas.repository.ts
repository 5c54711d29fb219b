import { corpoDaEntrega, type TrabalhoDeEntrega, trabalhoDeEntrega } from '@hub/contracts';
import type { SqlPool } from '@hub/database';
import { fatiaDoResumo, horaDoResumo, LIMITES_DA_LATENCIA } from '@hub/hub-data';

/** The latency buckets' lower bounds as a constant of the prepared statement (not a parameter sent each batch). */
const LIMITES_SQL = `'{${LIMITES_DA_LATENCIA.join(',')}}'::float8[]`;

/** A job asking to claim its delivery: a new token, and the token its job carries from an earlier claim. */
export interface Pedido {
  id: string;
  token: string;
  anterior: string | null;
}

/**
 * A delivery claimed for an attempt (situacao em_andamento now, held by the pedido's token), cancelled
 * for good, or in fila_de_erro as a poison job (its claims kept dying with their worker).
 */
export interface Reivindicada {
  id: string;
  situacao: 'em_andamento' | 'cancelada' | 'fila_de_erro';
  tentativas_no_ciclo_atual: number;
  maximo_de_tentativas: number;
  /** The subscription's url_de_destino now: where this attempt goes (a PATCH after the job was written counts). */
  url_de_destino: string;
  ultimo_erro: string | null;
  /** Of an ordered subscription's delivery (a bigint, as text): cancelada or fila_de_erro here passes its entity's turn. */
  sequencia: string | null;
  assinatura_id: string;
  entidade_id: string;
  /** The subscription's formato now (migration 030): the shape this attempt's body takes. */
  formato: 'standard-webhooks' | 'cloudevents';
}

/**
 * A delivery of an ordered subscription that became final: the turn of its entity passes to the
 * next one (docs/decisions/ordered-delivery-per-entity.md).
 */
export interface Final {
  assinatura_id: string;
  entidade_id: string;
  /** bigint, as text */
  sequencia: string;
}

/** One attempt to record. */
export interface Registro {
  entrega_id: string;
  tentativa_id: string;
  iniciada_em: Date;
  duracao_ms: number;
  status_http: number | null;
  sucesso: boolean;
  resposta: string | null;
  erro: string | null;
  cabecalhos: Record<string, string>;
  /** 410 Gone: the subscription is switched off and the delivery goes to the error queue at once. */
  encerrar: boolean;
  /**
   * When the next attempt is due if this one failed and attempts remain (its job's own expiry); null
   * for a success, whose record does not read it.
   */
  proxima_tentativa_em: Date | null;
  /**
   * The latest moment its job can be back: the end of its delay step (a message expires only at the
   * head of its queue); null for a success, whose record does not read it.
   */
  retorno_ate: Date | null;
}

/** What recording did to a delivery; absent when it was final already (another worker recorded it). */
export interface Registrada {
  id: string;
  situacao: 'concluida' | 'aguardando_nova_tentativa' | 'fila_de_erro' | 'cancelada';
  tentativas_no_ciclo_atual: number;
  /** Of an ordered subscription's delivery (bigint, as text); null otherwise. */
  sequencia: string | null;
  assinatura_id: string;
  entidade_id: string;
}

/** A job the sweeper sends again, rebuilt from the database. */
export interface Perdida {
  entrega_id: string;
  evento_id: string;
  assinatura_id: string;
  url_de_destino: string;
  evento_tipo: string;
  versao_do_esquema: number;
  entidade_id: string;
  ocorrido_em: Date;
  recebido_em: Date;
  aplicativo_publicador_id: string;
  dados: string;
  /** Published from the panel (publicado_pelo_email set): the body says so. */
  teste: boolean;
  tentativas_no_ciclo_atual: number;
  ultimo_erro: string | null;
  /** Its place among its entity's deliveries when its subscription is ordered (bigint, as text). */
  sequencia: string | null;
}

/** The job of a delivery, rebuilt from the database as publication writes it. */
export function trabalhoDaLinha(p: Perdida): TrabalhoDeEntrega {
  return trabalhoDeEntrega.schema.parse({
    entrega_id: p.entrega_id,
    evento_id: p.evento_id,
    assinatura_id: p.assinatura_id,
    url_de_destino: p.url_de_destino,
    corpo: corpoDaEntrega(
      { ...p, tipo: p.evento_tipo, ocorrido_em: new Date(p.ocorrido_em), recebido_em: new Date(p.recebido_em) },
      p.assinatura_id,
      p.dados,
      p.sequencia === null ? null : Number(p.sequencia),
    ),
    request_id: null,
  });
}

/** What rebuilding a job reads, from `marcadas` (the rows a statement changed). */
const TRABALHO_DAS_MARCADAS = `
  select m.id::text as entrega_id, m.evento_id::text, m.assinatura_id::text, m.url_de_destino,
         t.nome as evento_tipo, ev.versao_do_esquema, ev.entidade_id, ev.ocorrido_em, ev.recebido_em,
         ev.aplicativo_publicador_id::text, ev.dados::text as dados, ev.publicado_pelo_email is not null as teste,
         m.tentativas_no_ciclo_atual, m.ultimo_erro, m.sequencia::text
  from marcadas m
  join evento ev on ev.id = m.evento_id
  join tipo_de_evento t on t.id = ev.tipo_de_evento_id`;

/** How long a claim holds a delivery, and after how many dead claims a job is poison. */
export interface Prazos {
  /** The claim's lease: longer than a worker can take from its claim to its record. */
  reivindicacaoMs: number;
  /** Claims in a row that ended with no attempt recorded (their worker died) before the next marks the job poison. */
  reivindicacoesAteVeneno: number;
}

/**
 * The worker's statements on hub_events. Each is ONE SQL statement over a batch of deliveries (its
 * rows passed as one JSON parameter): a statement is its own transaction, and batching is what
 * makes thousands of attempts per second possible (architecture §5). They are named prepared statements
 * (SqlPool), planned once per connection.
 */
export function entregasRepository(sql: SqlPool, prazos: Prazos) {
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
      sql.consultar<Reivindicada>(
        'entrega_reivindicar',
        `with p as (
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
        [JSON.stringify(pedidos), prazos.reivindicacaoMs, prazos.reivindicacoesAteVeneno],
      ),

    /**
     * Gives claims back with no attempt made (the worker is stopping): each delivery waits again as
     * it did before its claim (pendente, or aguardando_nova_tentativa), due now, so its job, back in
     * the queue, is taken at once by any worker. Only the claim of the token given is released.
     */
    liberar: (posses: { id: string; token: string }[]) =>
      sql.consultar<{ id: string }>(
        'entrega_liberar',
        `update entrega e
         set situacao = case when e.tentativas_no_ciclo_atual = 0 then 'pendente' else 'aguardando_nova_tentativa' end,
             reivindicacao = null, reivindicada_ate = null, proxima_tentativa_em = now(), atualizada_em = now(),
             reivindicacoes_sem_tentativa = greatest(e.reivindicacoes_sem_tentativa - 1, 0)
         from json_to_recordset($1::json) as p(id uuid, token uuid)
         where e.id = p.id and e.situacao = 'em_andamento' and e.reivindicacao = p.token
         returning e.id::text`,
        [JSON.stringify(posses)],
      ),

    /**
     * A poison job (its message cannot be read, or it failed the handler on its last try): the
     * delivery goes to fila_de_erro with why, once, before its job goes to the error queue, unless
     * it is final already or another job holds a live claim on it. Gives what rebuilding its job
     * needs; nothing when no row changed.
     */
    envenenar: (id: string, token: string | null, erro: string) =>
      sql.consultar<Perdida>(
        'entrega_envenenar',
        `with alvo as (
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
        [id, token, erro, prazos.reivindicacaoMs],
      ),

    /**
     * Records attempts and their deliveries' new state, the subscriptions a 410 switched off and the
     * hour's tallies and latency histogram (@hub/hub-data's latencia.ts), in one statement (one
     * transaction), conditional on each delivery not being final: an attempt of a delivery another
     * worker already finished changes nothing.
     */
    async registrar(registros: Registro[], agora = new Date()): Promise<Registrada[]> {
      if (registros.length === 0) return [];
      return sql.consultar<Registrada>(
        'entrega_registrar',
        `with d as (
           select * from json_to_recordset($1::json) as d(
             entrega_id uuid, tentativa_id uuid, iniciada_em timestamptz, duracao_ms int, status_http int,
             sucesso boolean, resposta text, erro text, cabecalhos jsonb, encerrar boolean,
             proxima_tentativa_em timestamptz, retorno_ate timestamptz)
         ),
         alvo as (
           select e.id from entrega e
           where e.id = any(array(select entrega_id from d))
             and e.situacao not in ('concluida', 'fila_de_erro', 'cancelada') -- by id alone, as above
           order by e.id
           for update of e
         ),
         upd as (
           update entrega e
           set quantidade_de_tentativas = e.quantidade_de_tentativas + 1,
               tentativas_no_ciclo_atual = e.tentativas_no_ciclo_atual + 1,
               situacao = case
                 when d.sucesso then 'concluida'
                 -- a subscription deleted while its last attempt was under way receives nothing more:
                 -- the delivery is cancelled, not left in the error queue where nothing can reach it
                 when a.excluida_em is not null then 'cancelada'
                 when d.encerrar or e.tentativas_no_ciclo_atual + 1 >= e.maximo_de_tentativas then 'fila_de_erro'
                 else 'aguardando_nova_tentativa' end,
               entregue_em = case when d.sucesso then d.iniciada_em + d.duracao_ms * interval '1 millisecond'
                                  else e.entregue_em end,
               proxima_tentativa_em = case when d.sucesso then e.proxima_tentativa_em else d.proxima_tentativa_em end,
               ultimo_erro = case when d.sucesso then null else d.erro end,
               retorno_ate = case when d.sucesso then null else d.retorno_ate end,
               reivindicacao = null, reivindicada_ate = null, reivindicacoes_sem_tentativa = 0,
               atualizada_em = now()
           from d, alvo, assinatura a
           where e.id = d.entrega_id and alvo.id = e.id and e.id = any(array(select entrega_id from d)) -- as above
             and a.id = e.assinatura_id
           returning e.id, e.assinatura_id, e.situacao, e.quantidade_de_tentativas, e.tentativas_no_ciclo_atual,
                     e.evento_recebido_em, e.entregue_em, e.entidade_id, e.sequencia
         ),
         tentativas as (
           -- assinatura_id: the delivery's, copied (migration 026, GET /tentativa?assinatura_id='s index)
           insert into tentativa (id, entrega_id, assinatura_id, numero, iniciada_em, duracao_ms, status_http, sucesso,
                                  resposta, erro, cabecalhos)
           select d.tentativa_id, upd.id, upd.assinatura_id, upd.quantidade_de_tentativas, d.iniciada_em, d.duracao_ms,
                  d.status_http, d.sucesso, d.resposta, d.erro, d.cabecalhos
           from upd join d on d.entrega_id = upd.id
         ),
         desligadas as (
           update assinatura a set ativa = false, atualizado_em = now()
           from upd join d on d.entrega_id = upd.id
           where d.encerrar and a.id = upd.assinatura_id and a.ativa
         ),
         -- on the transaction's slice (migration 023), not a random one: the attempts inserted above
         -- run tentativa's statement trigger (migration 024), which adds them to that slice of their
         -- hour after this. On a random slice and the transaction's, two records could each hold the
         -- row the other's second upsert wants (deadlock); on one slice, the second upsert finds the
         -- row this one holds. The hours the attempts started in are upserted here too (nothing added),
         -- with this hour, in hour order: an attempt started before the hour turned and recorded after
         -- it would otherwise have its earlier hour locked by the trigger after this later one, out of
         -- order, and meet in a cycle (40P01) a writer that locks hours in order (publication's group
         -- write of events received on both sides of the turn, on the same slice)
         contadas as (
           insert into resumo_por_hora (hora, fatia, entregas_concluidas, tentativas_com_falha)
           select hora, fatia_da_transacao(), sum(concluidas), sum(falhas)
           from (select $2::timestamptz as hora, count(*) filter (where d.sucesso) as concluidas,
                        count(*) filter (where not d.sucesso) as falhas
                   from upd join d on d.entrega_id = upd.id
                 having count(*) > 0
                 union all
                 select date_trunc('hour', d.iniciada_em, 'UTC'), 0, 0 from upd join d on d.entrega_id = upd.id) h
           group by hora
           order by hora
           on conflict (hora, fatia) do update
             set entregas_concluidas = resumo_por_hora.entregas_concluidas + excluded.entregas_concluidas,
                 tentativas_com_falha = resumo_por_hora.tentativas_com_falha + excluded.tentativas_com_falha
         ),
         -- the latency of each delivery concluded here, acceptance to conclusion, in its bucket of the
         -- hour's histogram (migration 021): one row per bucket the batch touches, in bucket order
         latencias as (
           insert into resumo_latencia_por_hora (hora, fatia, balde, entregas)
           select $2::timestamptz, $3::int,
                  width_bucket(greatest(0, floor(extract(epoch from upd.entregue_em - upd.evento_recebido_em) * 1000)),
                               ${LIMITES_SQL}),
                  count(*)
           from upd where upd.situacao = 'concluida'
           group by 3 order by 3
           on conflict (hora, fatia, balde) do update
             set entregas = resumo_latencia_por_hora.entregas + excluded.entregas
         )
         select id::text, situacao, tentativas_no_ciclo_atual, sequencia::text, assinatura_id::text, entidade_id
           from upd`,
        [JSON.stringify(registros), horaDoResumo(agora), fatiaDoResumo()],
      );
    },

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
      sql.consultar<Perdida>(
        'entrega_recolher_perdidas',
        `with alvo as (
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
        [idadeMs, retomadaMs, limite, prazos.reivindicacaoMs],
      ),

    /**
     * Passes the turn of each entity whose ordered delivery became final to its next delivery
     * (liberar_seguintes, migration 020: the chain's row locked first, then read afresh); the
     * deliveries it released, with what rebuilding their jobs needs, for the caller to publish.
     * Harmless twice: a turn already passed is not passed again.
     */
    passarAVez: (finais: Final[]) =>
      sql.consultar<Perdida>('entrega_passar_a_vez', 'select * from liberar_seguintes($1::jsonb)', [
        JSON.stringify(finais),
      ]),

    /**
     * The sweeper's side of ordered delivery: chains whose turn sits on a delivery that is final (or
     * gone: erased by retention) because the process that finished it died before passing the turn,
     * or finished it without passing it (a hub-api path). Their turn is passed now, as `passarAVez`.
     */
    recolherVezesPerdidas: (limite: number) =>
      sql.consultar<Perdida>(
        'entrega_recolher_vezes_perdidas',
        `select * from liberar_seguintes((
           select coalesce(jsonb_agg(jsonb_build_object('assinatura_id', c.assinatura_id, 'entidade_id', c.entidade_id,
                                                        'sequencia', c.pronta)), '[]'::jsonb)
             from (select c.assinatura_id, c.entidade_id, c.pronta from sequencia_de_entidade c
                    where c.pronta <= c.ultima
                      and not exists (select 1 from entrega e
                                       where e.assinatura_id = c.assinatura_id and e.entidade_id = c.entidade_id
                                         and e.sequencia = c.pronta
                                         and e.situacao not in ('concluida', 'fila_de_erro', 'cancelada'))
                    limit $1::int) c))`,
        [limite],
      ),
  };
}
export type EntregasRepository = ReturnType<typeof entregasRepository>;
