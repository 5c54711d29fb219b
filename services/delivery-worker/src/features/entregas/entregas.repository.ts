import type { SqlPool } from '@hub/database';

/** The tally slices of resumo_por_hora (0–15), as publication spreads them. */
const FATIAS = 16;
const HORA_MS = 3_600_000;
export const horaDe = (instante: Date) => new Date(Math.floor(instante.getTime() / HORA_MS) * HORA_MS);

/** A delivery claimed for an attempt (situacao em_andamento now), or cancelled for good. */
export interface Reivindicada {
  id: string;
  situacao: 'em_andamento' | 'cancelada';
  tentativas_no_ciclo_atual: number;
  maximo_de_tentativas: number;
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
  /** When the next attempt is due if this one failed and attempts remain. */
  proxima_tentativa_em: Date;
}

/** What recording did to a delivery; absent when it was final already (another worker recorded it). */
export interface Registrada {
  id: string;
  situacao: 'concluida' | 'aguardando_nova_tentativa' | 'fila_de_erro';
  tentativas_no_ciclo_atual: number;
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
}

/**
 * The worker's statements on hub_events. Each is ONE SQL statement over a batch of deliveries (its
 * rows passed as one JSON parameter): a statement is its own transaction, and batching is what
 * makes thousands of attempts per second possible (DESIGN §5). They are named prepared statements
 * (SqlPool), planned once per connection.
 */
export function entregasRepository(sql: SqlPool) {
  return {
    /**
     * Claims deliveries for an attempt: those not final become em_andamento, or cancelada when
     * their subscription was switched off or deleted meanwhile. Final or unknown ones are not
     * returned (their job is acked and dropped, so a redelivery is harmless). Rows are locked in
     * id order, so two workers claiming overlapping batches cannot deadlock.
     */
    reivindicar: (ids: string[]) =>
      sql.consultar<Reivindicada>(
        'entrega_reivindicar',
        `with alvo as (
           select e.id, (a.ativa and a.excluida_em is null) as viva
           from entrega e join assinatura a on a.id = e.assinatura_id
           where e.id = any(array(select value::uuid from json_array_elements_text($1::json)))
             -- "not final", written as a negation so the planner looks rows up by id alone instead
             -- of also scanning entrega_em_aberto (the whole backlog)
             and e.situacao not in ('concluida', 'fila_de_erro', 'cancelada')
           order by e.id
           for update of e
         )
         update entrega e
         set situacao = case when alvo.viva then 'em_andamento' else 'cancelada' end,
             ultimo_erro = case when alvo.viva then e.ultimo_erro
                                else 'the subscription was switched off or deleted: delivery cancelled' end,
             atualizada_em = now()
         from alvo
         -- the ids again, so the planner reaches e by its primary key rather than hashing the table
         where e.id = alvo.id and e.id = any(array(select value::uuid from json_array_elements_text($1::json)))
         returning e.id::text, e.situacao, e.tentativas_no_ciclo_atual, e.maximo_de_tentativas`,
        [JSON.stringify(ids)],
      ),

    /**
     * Records attempts and their deliveries' new state, the subscriptions a 410 switched off and the
     * hour's tallies, in one statement (one transaction), conditional on each delivery not being
     * final: an attempt of a delivery another worker already finished changes nothing.
     */
    async registrar(registros: Registro[], agora = new Date()): Promise<Registrada[]> {
      if (registros.length === 0) return [];
      return sql.consultar<Registrada>(
        'entrega_registrar',
        `with d as (
           select * from json_to_recordset($1::json) as d(
             entrega_id uuid, tentativa_id uuid, iniciada_em timestamptz, duracao_ms int, status_http int,
             sucesso boolean, resposta text, erro text, cabecalhos jsonb, encerrar boolean,
             proxima_tentativa_em timestamptz)
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
                 when d.encerrar or e.tentativas_no_ciclo_atual + 1 >= e.maximo_de_tentativas then 'fila_de_erro'
                 else 'aguardando_nova_tentativa' end,
               entregue_em = case when d.sucesso then d.iniciada_em + d.duracao_ms * interval '1 millisecond'
                                  else e.entregue_em end,
               proxima_tentativa_em = case when d.sucesso then e.proxima_tentativa_em else d.proxima_tentativa_em end,
               ultimo_erro = case when d.sucesso then null else d.erro end,
               atualizada_em = now()
           from d, alvo
           where e.id = d.entrega_id and alvo.id = e.id and e.id = any(array(select entrega_id from d)) -- as above
           returning e.id, e.assinatura_id, e.situacao, e.quantidade_de_tentativas, e.tentativas_no_ciclo_atual
         ),
         tentativas as (
           insert into tentativa (id, entrega_id, numero, iniciada_em, duracao_ms, status_http, sucesso, resposta,
                                  erro, cabecalhos)
           select d.tentativa_id, upd.id, upd.quantidade_de_tentativas, d.iniciada_em, d.duracao_ms, d.status_http,
                  d.sucesso, d.resposta, d.erro, d.cabecalhos
           from upd join d on d.entrega_id = upd.id
         ),
         desligadas as (
           update assinatura a set ativa = false, atualizado_em = now()
           from upd join d on d.entrega_id = upd.id
           where d.encerrar and a.id = upd.assinatura_id and a.ativa
         ),
         contadas as (
           insert into resumo_por_hora (hora, fatia, entregas_concluidas, tentativas_com_falha)
           select $2::timestamptz, $3::int, count(*) filter (where d.sucesso), count(*) filter (where not d.sucesso)
           from upd join d on d.entrega_id = upd.id
           having count(*) > 0
           on conflict (hora, fatia) do update
             set entregas_concluidas = resumo_por_hora.entregas_concluidas + excluded.entregas_concluidas,
                 tentativas_com_falha = resumo_por_hora.tentativas_com_falha + excluded.tentativas_com_falha
         )
         select id::text, situacao, tentativas_no_ciclo_atual from upd`,
        [JSON.stringify(registros), horaDe(agora), Math.floor(Math.random() * FATIAS)],
      );
    },

    /**
     * Deliveries whose job seems lost: pendente or aguardando_nova_tentativa past their
     * proxima_tentativa_em by `idadeMs` (not to a paused destination), or em_andamento untouched for `emAndamentoMs` (no live
     * worker). Taken with SKIP LOCKED and stamped (proxima_tentativa_em, atualizada_em = now), so
     * another sweeper neither waits for them nor sends them too.
     */
    recolherPerdidas: (idadeMs: number, emAndamentoMs: number, limite: number) =>
      sql.consultar<Perdida>(
        'entrega_recolher_perdidas',
        `with alvo as (
           select e.id from entrega e
           where (e.situacao in ('pendente', 'aguardando_nova_tentativa')
                  and e.proxima_tentativa_em < now() - $1::int * interval '1 millisecond'
                  -- a paused destination's jobs are waiting on purpose, in a delay queue
                  and not exists (select 1 from destino d
                                  where d.pausado and d.origem = origem_da_url(e.url_de_destino)))
              or (e.situacao = 'em_andamento' and e.atualizada_em < now() - $2::int * interval '1 millisecond')
           order by e.proxima_tentativa_em
           limit $3::int
           for update skip locked
         ),
         marcadas as (
           update entrega e set proxima_tentativa_em = now(), atualizada_em = now()
           from alvo where e.id = alvo.id
           returning e.id, e.evento_id, e.assinatura_id, e.url_de_destino
         )
         select m.id::text as entrega_id, m.evento_id::text, m.assinatura_id::text, m.url_de_destino,
                t.nome as evento_tipo, ev.versao_do_esquema, ev.entidade_id, ev.ocorrido_em, ev.recebido_em,
                ev.aplicativo_publicador_id::text, ev.dados::text as dados,
                ev.publicado_pelo_email is not null as teste
         from marcadas m
         join evento ev on ev.id = m.evento_id
         join tipo_de_evento t on t.id = ev.tipo_de_evento_id`,
        [idadeMs, emAndamentoMs, limite],
      ),
  };
}
export type EntregasRepository = ReturnType<typeof entregasRepository>;
