-- The exact number of stored deliveries, per hour of criada_em, in the slices of resumo_por_hora, as
-- eventos_guardados (migration 005) is for events: GET /entrega's total without a filter is their sum,
-- not count(*) of entrega (276 ms at p99 at 3,000,000 deliveries; docs/decisions.md "Exact total of
-- GET /entrega"). Kept in the writing statement's transaction, whoever writes (publication, retention,
-- a test, an operator), by the statement-level triggers entrega already has (migration 018): the
-- publication's group write, one insert of many deliveries, pays one upsert more, not another trigger.
-- As with events, a slice may go negative; only the sum of an hour's slices is the hour's count.

-- Taken first and held until the commit that makes the new trigger bodies live, so that no delivery
-- is written between the count at the end and that commit. First, before resumo_por_hora's lock (the
-- alter below): a publication that already holds entrega, and whose triggers will want
-- resumo_por_hora, finishes before this waits for it, instead of the two waiting on each other.
lock table entrega in share row exclusive mode;

alter table resumo_por_hora add column entregas_guardadas integer not null default 0;

-- The slice a transaction adds to: one per transaction, where the triggers drew one at random per
-- statement and count. Publication writes an event and its deliveries in one statement, and both
-- evento's trigger and entrega's upsert the hour's tallies: on two random slices, two publications
-- could lock them in opposite orders and deadlock (40P01, what migration 005 found for two counts
-- of one trigger). On one slice, the second upsert updates the row its transaction already holds.
-- Transactions that write at the same time have nearby ids, so they still spread over the 16 slices.
-- (Called from triggers of writing statements only: the transaction has its id already.)
create function fatia_da_transacao() returns integer language sql volatile
  return (txid_current() % 16)::int;

create or replace function eventos_guardados_somar() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, eventos, eventos_guardados)
  select date_trunc('hour', recebido_em, 'UTC'), fatia_da_transacao(), count(*), count(*)
    from novos group by 1 order by 1
  on conflict (hora, fatia) do update
    set eventos = resumo_por_hora.eventos + excluded.eventos,
        eventos_guardados = resumo_por_hora.eventos_guardados + excluded.eventos_guardados;
  return null;
end $$;

create or replace function eventos_guardados_subtrair() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, eventos_guardados)
  select date_trunc('hour', recebido_em, 'UTC'), fatia_da_transacao(), -count(*)
    from velhos group by 1 order by 1
  on conflict (hora, fatia) do update
    set eventos_guardados = resumo_por_hora.eventos_guardados + excluded.eventos_guardados;
  return null;
end $$;

create or replace function eventos_guardados_mover() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, eventos_guardados)
  select hora, fatia_da_transacao(), sum(n)
    from (select date_trunc('hour', recebido_em, 'UTC') as hora, 1 as n from novos
          union all
          select date_trunc('hour', recebido_em, 'UTC'), -1 from velhos) m
   group by hora
  having sum(n) <> 0
   order by hora
  on conflict (hora, fatia) do update
    set eventos_guardados = resumo_por_hora.eventos_guardados + excluded.eventos_guardados;
  return null;
end $$;

-- Migration 020's body, and the count: one upsert per hour the statement inserted into.
create or replace function entrega_nao_concluida_inserir() returns trigger language plpgsql as $$
begin
  insert into entrega_nao_concluida (entrega_id, fase, proxima_tentativa_em, criada_em, assinatura_id,
                                     tipo_de_evento_id, aplicativo_assinante_id)
  select id, fase_da_entrega(situacao), vencimento_da_entrega(proxima_tentativa_em, em_espera), criada_em,
         assinatura_id, tipo_de_evento_id, aplicativo_assinante_id
    from novas where situacao <> 'concluida';
  insert into resumo_por_hora (hora, fatia, entregas_guardadas)
  select date_trunc('hour', criada_em, 'UTC'), fatia_da_transacao(), count(*)
    from novas group by 1 order by 1
  on conflict (hora, fatia) do update
    set entregas_guardadas = resumo_por_hora.entregas_guardadas + excluded.entregas_guardadas;
  return null;
end $$;

-- Migration 018's body, and the count. A delete of events (retention, an operator) deletes their
-- deliveries by the foreign key's cascade, one statement per event, but this runs once for the
-- deleting statement, over all of them: PostgreSQL gathers one statement's foreign-key actions on a
-- table into one transition table and fires its statement triggers once.
create or replace function entrega_nao_concluida_apagar() returns trigger language plpgsql as $$
begin
  delete from entrega_nao_concluida c using velhas v where c.entrega_id = v.id and v.situacao <> 'concluida';
  insert into resumo_por_hora (hora, fatia, entregas_guardadas)
  select date_trunc('hour', criada_em, 'UTC'), fatia_da_transacao(), -count(*)
    from velhas group by 1 order by 1
  on conflict (hora, fatia) do update
    set entregas_guardadas = resumo_por_hora.entregas_guardadas + excluded.entregas_guardadas;
  return null;
end $$;

create or replace function entrega_nao_concluida_esvaziar() returns trigger language plpgsql as $$
begin
  truncate entrega_nao_concluida;
  update resumo_por_hora set entregas_guardadas = 0 where entregas_guardadas <> 0;
  return null;
end $$;

-- Nothing changes a delivery's criada_em (it is its event's recebido_em, written at publication). An
-- operator's update that does moves the row to its new hour. Row-level, on that column only: an
-- UPDATE that does not set criada_em (every claim and record of the worker) does not even test the
-- WHEN, where a statement-level trigger on update would capture every claimed row (what migration 022
-- took off the claim; transition tables cannot be limited to a column).
create function entregas_guardadas_mover() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, entregas_guardadas)
  select hora, fatia_da_transacao(), n
    from (values (date_trunc('hour', old.criada_em, 'UTC'), -1), (date_trunc('hour', new.criada_em, 'UTC'), 1)) m (hora, n)
   where date_trunc('hour', old.criada_em, 'UTC') <> date_trunc('hour', new.criada_em, 'UTC')
   order by hora
  on conflict (hora, fatia) do update
    set entregas_guardadas = resumo_por_hora.entregas_guardadas + excluded.entregas_guardadas;
  return null;
end $$;

create trigger entrega_movida after update of criada_em on entrega for each row
  when (old.criada_em <> new.criada_em) execute function entregas_guardadas_mover();

-- The deliveries stored before this migration, counted under the lock taken above.
insert into resumo_por_hora (hora, fatia, entregas_guardadas)
select date_trunc('hour', criada_em, 'UTC'), 0, count(*) from entrega group by 1
on conflict (hora, fatia) do update set entregas_guardadas = excluded.entregas_guardadas;
