-- A TRUNCATE of evento (an operator's `truncate evento cascade`, or of a table whose cascade reaches it:
-- aplicativo, tipo_de_evento, versao_de_esquema) fires no delete trigger, so eventos_guardados
-- (migration 005: GET /evento's exact total and its deep pages) kept the count of every event it
-- erased, for good: the total stayed at the old number over an empty table, and a deep page sought an
-- hour that no longer held anything. entrega has had its truncate trigger since migration 018 (and
-- zeroes entregas_guardadas since 023); the cascade truncates entrega too and runs it, so GET /entrega's
-- total was right and GET /evento's was not.
--
-- As entrega's: every slice of every hour back to 0, in the truncating statement's transaction (a
-- TRUNCATE holds evento's ACCESS EXCLUSIVE lock, so no event is written meanwhile). `eventos` (what
-- arrived in the hour, the summary's) is history, not what is stored: untouched.
-- (Numbered 025: 024 is reserved for another change under way.) Two changes, both for what an
-- operator does by hand: this one, and a move of criada_em below.
create function eventos_guardados_esvaziar() returns trigger language plpgsql as $$
begin
  update resumo_por_hora set eventos_guardados = 0 where eventos_guardados <> 0;
  return null;
end $$;

create trigger evento_truncado after truncate on evento
  for each statement execute function eventos_guardados_esvaziar();

-- An operator's UPDATE that moves deliveries' criada_em to another hour (migration 023's row trigger
-- entrega_movida) upserted the hours' slices once per row: every row of the statement updated the
-- same one or two rows of resumo_por_hora again, in one transaction, so their versions piled up
-- (none can be pruned while the transaction runs) and each upsert walked all of them: quadratic.
-- Measured at 1,000,000 deliveries: 4,500 moved by one hour in 1.2 s, 9,000 in 5.4 s, 18,000 (one
-- hour's) in 22.4 s, against 1.3 s for the same 18,000 rows updated within their hour; a day's would
-- take hours, holding those slices (and the fold of old hours, and any publication of the current
-- hour's slice) the whole time.
--
-- Now the row trigger only notes the move in a temporary table of the session (rows discarded at the
-- end of the transaction, and with a rollback), and a statement-level trigger `after update of
-- criada_em` (no transition table: it cannot take a column list) adds them up once per hour, in hour
-- order, on the transaction's slice, as the insert and delete triggers do. An UPDATE that does not
-- set criada_em (every claim and record of the worker) runs neither.
create or replace function entregas_guardadas_mover() returns trigger language plpgsql as $$
begin
  if date_trunc('hour', old.criada_em, 'UTC') = date_trunc('hour', new.criada_em, 'UTC') then
    return null;
  end if;
  if to_regclass('pg_temp.entregas_movidas') is null then
    create temporary table entregas_movidas (hora timestamptz not null, n integer not null) on commit delete rows;
  end if;
  insert into pg_temp.entregas_movidas (hora, n)
  values (date_trunc('hour', old.criada_em, 'UTC'), -1), (date_trunc('hour', new.criada_em, 'UTC'), 1);
  return null;
end $$;

create function entregas_guardadas_somar_movidas() returns trigger language plpgsql as $$
begin
  if to_regclass('pg_temp.entregas_movidas') is null then
    return null;
  end if;
  with movidas as (delete from pg_temp.entregas_movidas returning hora, n)
  insert into resumo_por_hora (hora, fatia, entregas_guardadas)
  select hora, fatia_da_transacao(), sum(n) from movidas group by hora having sum(n) <> 0 order by hora
  on conflict (hora, fatia) do update
    set entregas_guardadas = resumo_por_hora.entregas_guardadas + excluded.entregas_guardadas;
  return null;
end $$;

-- After the row triggers of the same statement (AFTER events fire in the order they were queued).
create trigger entregas_movidas after update of criada_em on entrega
  for each statement execute function entregas_guardadas_somar_movidas();
