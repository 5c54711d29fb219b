-- Less of PostgreSQL's CPU per delivery (issue 19; docs/decisions.md "PostgreSQL's work per delivery",
-- second part). Measured statement by statement with bench/pg-entrega.ts: the CPU time of the backend
-- running publication's group write, the worker's claim and its record.

-- 1. The worker's claim no longer runs entrega_nao_concluida's update trigger. Every UPDATE of entrega
-- fired one statement-level trigger that captured the old and new rows of the statement and ran two
-- statements over them, though a claim (pendente → em_andamento: the same fase, the same due time)
-- never changes the copy: a quarter of the claim's CPU. Now:
--   * deliveries that become concluida lose their copy in one statement per UPDATE, as before (the
--     record of a batch of successes: set-based, one delete for all), over the new rows only;
--   * any other change of the copy (a retry's due time, the error queue, a cancellation, a release
--     from em_espera, a resend of a concluded delivery) is a row-level trigger whose WHEN is the
--     condition the old body tested per row: an update that changes no copy queues no trigger event
--     at all, so the claim pays one cheap comparison per row. Those updates are the rare ones; a
--     bulk one (reprocessing, a subscription's cancellation) runs the upsert once per row.
drop trigger entrega_atualizada on entrega;
drop function entrega_nao_concluida_atualizar();

create function entrega_nao_concluida_concluir() returns trigger language plpgsql as $$
begin
  delete from entrega_nao_concluida c using novas n where c.entrega_id = n.id and n.situacao = 'concluida';
  return null;
end $$;

create function entrega_nao_concluida_mudar() returns trigger language plpgsql as $$
begin
  insert into entrega_nao_concluida as c (entrega_id, fase, proxima_tentativa_em, criada_em, assinatura_id,
                                          tipo_de_evento_id, aplicativo_assinante_id)
  values (new.id, fase_da_entrega(new.situacao), vencimento_da_entrega(new.proxima_tentativa_em, new.em_espera),
          new.criada_em, new.assinatura_id, new.tipo_de_evento_id, new.aplicativo_assinante_id)
  on conflict (entrega_id) do update
    set fase = excluded.fase, proxima_tentativa_em = excluded.proxima_tentativa_em, criada_em = excluded.criada_em,
        assinatura_id = excluded.assinatura_id, tipo_de_evento_id = excluded.tipo_de_evento_id,
        aplicativo_assinante_id = excluded.aplicativo_assinante_id;
  return null;
end $$;

create trigger entrega_concluida after update on entrega
  referencing new table as novas for each statement execute function entrega_nao_concluida_concluir();
-- The WHEN is the old body's per-row test, written on the columns themselves: the copy's fase
-- changes when situacao changes unless both are states of the queue (a concluded delivery going back
-- is one of those), its due time when proxima_tentativa_em or em_espera does. (A waiting delivery's
-- new proxima_tentativa_em fires it though its copy stays at 'infinity': a harmless upsert.) Written
-- with fase_da_entrega and a row comparison, the test cost the claim as much as the old trigger did.
create trigger entrega_mudou after update on entrega for each row
  when (new.situacao <> 'concluida'
        and ((old.situacao <> new.situacao
              and (old.situacao not in ('pendente', 'em_andamento', 'aguardando_nova_tentativa')
                   or new.situacao not in ('pendente', 'em_andamento', 'aguardando_nova_tentativa')))
             or old.proxima_tentativa_em <> new.proxima_tentativa_em
             or old.em_espera <> new.em_espera
             or old.criada_em <> new.criada_em
             or old.assinatura_id <> new.assinatura_id
             or old.tipo_de_evento_id <> new.tipo_de_evento_id
             or old.aplicativo_assinante_id <> new.aplicativo_assinante_id))
  execute function entrega_nao_concluida_mudar();

-- 2. Two foreign keys whose guarantee others already give, each checked per row written (a query and
-- a row lock on the parent, ~4 % of the three statements' CPU together):
--   * entrega.aplicativo_assinante_id is a copy of its subscription's, made at publication and never
--     changed; entrega_assinatura_id_fkey and assinatura's own key to aplicativo keep it pointing at
--     an application;
--   * evento.aplicativo_publicador_id is its type's owner (tipo_de_evento.aplicativo_id: "the only
--     application that publishes events of this type"); evento_versao → versao_de_esquema →
--     tipo_de_evento → aplicativo keeps that chain.
-- No code deletes an application (they are switched off, never erased).
alter table entrega drop constraint entrega_aplicativo_assinante_id_fkey;
alter table evento drop constraint evento_aplicativo_publicador_id_fkey;
