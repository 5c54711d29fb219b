import { type SqlPool, statement } from '@hub/database';
import { fatiaDoResumo, horaDoResumo, LIMITES_DA_LATENCIA } from '@hub/hub-data';
import type { Registrada, Registro } from './linhas';

/** The latency buckets' lower bounds as a constant of the prepared statement (not a parameter sent each batch). */
const LIMITES_SQL = `'{${LIMITES_DA_LATENCIA.join(',')}}'::float8[]`;

export const ENTREGA_REGISTRAR = statement<Registrada>({
  name: 'entrega_registrar',
  parameters: ['json', 'timestamptz', 'int4'],
  columns: {
    id: 'text',
    situacao: 'text',
    tentativas_no_ciclo_atual: 'int4',
    sequencia: 'text',
    assinatura_id: 'text',
    entidade_id: 'text',
  },
  text: `with d as (
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
});

/** The record's statement (`EtapaDeRegistro`): see `entregasRepository`. */
export function registroSql(sql: SqlPool) {
  return {
    /**
     * Records attempts and their deliveries' new state, the subscriptions a 410 switched off and the
     * hour's tallies and latency histogram (@hub/hub-data's latencia.ts), in one statement (one
     * transaction), conditional on each delivery not being final: an attempt of a delivery another
     * worker already finished changes nothing.
     */
    async registrar(registros: Registro[], agora = new Date()): Promise<Registrada[]> {
      if (registros.length === 0) return [];
      return sql.run(ENTREGA_REGISTRAR, [JSON.stringify(registros), horaDoResumo(agora), fatiaDoResumo()]);
    },
  };
}
