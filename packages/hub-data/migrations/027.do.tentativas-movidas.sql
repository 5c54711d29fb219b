-- An operator's UPDATE that moves attempts' iniciada_em to another hour, or changes their sucesso
-- (migration 024's row trigger tentativa_movida), upserted the hours' slices once per row: every row
-- of the statement updated the same one or two rows of resumo_por_hora again, in one transaction, so
-- their versions piled up (none can be pruned while the transaction runs) and each upsert walked all
-- of them: quadratic, as migration 025 found for entrega_movida. Measured at 1,000,000 attempts
-- (18,000 an hour): 4,500 moved by one hour in 1.2 s, 9,000 in 3.6 s, 18,000 (one hour's) in 13.4 s;
-- sucesso flipped on 18,000 in 5.1 s; against 1.0 s for the same 18,000 moved within their hour.
-- Holding those slices the whole time (and with them the fold of old hours, and any record of the
-- worker on the current hour's slice).
--
-- As migration 025 did for deliveries: the row trigger only notes the move in a temporary table of
-- the session (rows discarded at the end of the transaction, and with a rollback), and a
-- statement-level trigger `after update of iniciada_em, sucesso` (no transition table: it cannot take
-- a column list) adds them up once per hour, in hour order, on the transaction's slice, as the insert
-- and delete triggers do. An UPDATE that sets neither column runs neither trigger; nothing in the
-- code updates an attempt. (Numbered 027: 026 is taken by another change under way.)
create or replace function tentativas_guardadas_mover() returns trigger language plpgsql as $$
begin
  if date_trunc('hour', old.iniciada_em, 'UTC') = date_trunc('hour', new.iniciada_em, 'UTC')
     and old.sucesso = new.sucesso then
    return null;
  end if;
  if to_regclass('pg_temp.tentativas_movidas') is null then
    create temporary table tentativas_movidas (hora timestamptz not null, n integer not null, s integer not null)
      on commit delete rows;
  end if;
  insert into pg_temp.tentativas_movidas (hora, n, s)
  values (date_trunc('hour', old.iniciada_em, 'UTC'), -1, -old.sucesso::int),
         (date_trunc('hour', new.iniciada_em, 'UTC'), 1, new.sucesso::int);
  return null;
end $$;

create function tentativas_guardadas_somar_movidas() returns trigger language plpgsql as $$
begin
  if to_regclass('pg_temp.tentativas_movidas') is null then
    return null;
  end if;
  with movidas as (delete from pg_temp.tentativas_movidas returning hora, n, s)
  insert into resumo_por_hora (hora, fatia, tentativas_guardadas, tentativas_com_sucesso_guardadas)
  select hora, fatia_da_transacao(), sum(n), sum(s) from movidas
   group by hora having sum(n) <> 0 or sum(s) <> 0 order by hora
  on conflict (hora, fatia) do update
    set tentativas_guardadas = resumo_por_hora.tentativas_guardadas + excluded.tentativas_guardadas,
        tentativas_com_sucesso_guardadas =
          resumo_por_hora.tentativas_com_sucesso_guardadas + excluded.tentativas_com_sucesso_guardadas;
  return null;
end $$;

-- After the row triggers of the same statement (AFTER events fire in the order they were queued).
create trigger tentativas_movidas after update of iniciada_em, sucesso on tentativa
  for each statement execute function tentativas_guardadas_somar_movidas();
