-- The exact number of stored attempts, and of those that succeeded, per hour of iniciada_em, in the
-- slices of resumo_por_hora, as entregas_guardadas (migration 023) is for deliveries: GET /tentativa's
-- total without a filter, or with sucesso alone, is their sum, not count(*) of tentativa (docs/decisions.md
-- "Exact total of GET /tentativa"). Kept in the writing statement's transaction, whoever writes (the
-- worker's record, retention's cascade from evento through entrega, a test, an operator), by
-- statement-level triggers: the worker's record inserts a batch's attempts in one statement, so it
-- pays one upsert per hour the batch touched (one, nearly always), not one per attempt. As with events
-- and deliveries, a slice may go negative; only the sum of an hour's slices is the hour's count.

-- Taken first and held until the commit that makes the triggers live, so that no attempt is written
-- or erased between the count at the end and that commit. First, before resumo_por_hora's lock (the
-- alter below): a record of the worker holds tentativa before it upserts resumo_por_hora, and
-- finishes before this waits for the summary, instead of the two waiting on each other.
lock table tentativa in share row exclusive mode;

alter table resumo_por_hora
  add column tentativas_guardadas integer not null default 0,
  add column tentativas_com_sucesso_guardadas integer not null default 0;

-- One upsert per hour the statement inserted into, on the transaction's slice (fatia_da_transacao,
-- migration 023): the worker's record also adds its tallies (entregas_concluidas,
-- tentativas_com_falha) to that slice, in the same statement, so the second upsert of an hour updates
-- the row its transaction already holds.
create function tentativas_guardadas_somar() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, tentativas_guardadas, tentativas_com_sucesso_guardadas)
  select date_trunc('hour', iniciada_em, 'UTC'), fatia_da_transacao(), count(*), count(*) filter (where sucesso)
    from novas group by 1 order by 1
  on conflict (hora, fatia) do update
    set tentativas_guardadas = resumo_por_hora.tentativas_guardadas + excluded.tentativas_guardadas,
        tentativas_com_sucesso_guardadas =
          resumo_por_hora.tentativas_com_sucesso_guardadas + excluded.tentativas_com_sucesso_guardadas;
  return null;
end $$;

-- Retention deletes events; the cascade deletes their deliveries, and theirs their attempts. The
-- foreign-key actions of one statement on tentativa go into one transition table, so this runs once
-- for the deleting statement, over all of them (a test logs it).
create function tentativas_guardadas_subtrair() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, tentativas_guardadas, tentativas_com_sucesso_guardadas)
  select date_trunc('hour', iniciada_em, 'UTC'), fatia_da_transacao(), -count(*), -count(*) filter (where sucesso)
    from velhas group by 1 order by 1
  on conflict (hora, fatia) do update
    set tentativas_guardadas = resumo_por_hora.tentativas_guardadas + excluded.tentativas_guardadas,
        tentativas_com_sucesso_guardadas =
          resumo_por_hora.tentativas_com_sucesso_guardadas + excluded.tentativas_com_sucesso_guardadas;
  return null;
end $$;

create function tentativas_guardadas_zerar() returns trigger language plpgsql as $$
begin
  update resumo_por_hora set tentativas_guardadas = 0, tentativas_com_sucesso_guardadas = 0
   where tentativas_guardadas <> 0 or tentativas_com_sucesso_guardadas <> 0;
  return null;
end $$;

-- Nothing updates an attempt once recorded. An operator's update of its iniciada_em or sucesso moves
-- it: row-level, on those columns only, as entrega_movida (migration 023).
create function tentativas_guardadas_mover() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, tentativas_guardadas, tentativas_com_sucesso_guardadas)
  select hora, fatia_da_transacao(), sum(n), sum(s)
    from (values (date_trunc('hour', old.iniciada_em, 'UTC'), -1, -old.sucesso::int),
                 (date_trunc('hour', new.iniciada_em, 'UTC'), 1, new.sucesso::int)) m (hora, n, s)
   group by hora
  having sum(n) <> 0 or sum(s) <> 0
   order by hora
  on conflict (hora, fatia) do update
    set tentativas_guardadas = resumo_por_hora.tentativas_guardadas + excluded.tentativas_guardadas,
        tentativas_com_sucesso_guardadas =
          resumo_por_hora.tentativas_com_sucesso_guardadas + excluded.tentativas_com_sucesso_guardadas;
  return null;
end $$;

create trigger tentativas_inseridas after insert on tentativa
  referencing new table as novas for each statement execute function tentativas_guardadas_somar();
create trigger tentativas_apagadas after delete on tentativa
  referencing old table as velhas for each statement execute function tentativas_guardadas_subtrair();
create trigger tentativas_esvaziadas after truncate on tentativa
  for each statement execute function tentativas_guardadas_zerar();
create trigger tentativa_movida after update of iniciada_em, sucesso on tentativa for each row
  when (old.iniciada_em <> new.iniciada_em or old.sucesso <> new.sucesso)
  execute function tentativas_guardadas_mover();

-- The attempts stored before this migration, counted under the lock taken above.
insert into resumo_por_hora (hora, fatia, tentativas_guardadas, tentativas_com_sucesso_guardadas)
select date_trunc('hour', iniciada_em, 'UTC'), 0, count(*), count(*) filter (where sucesso) from tentativa group by 1
on conflict (hora, fatia) do update
  set tentativas_guardadas = excluded.tentativas_guardadas,
      tentativas_com_sucesso_guardadas = excluded.tentativas_com_sucesso_guardadas;
