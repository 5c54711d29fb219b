-- The exact number of stored events, per hour of recebido_em, in the slices of resumo_por_hora:
-- GET /evento's total is their sum, and a deep page finds the hour its offset lands in from them
-- (DESIGN §5, docs/decisions.md "Exact total and deep pages of GET /evento").
--
-- Unlike `eventos` (what arrived in the hour, for the summary, never decremented; from now on
-- counted by the same insert trigger), eventos_guardados follows what is stored: triggers on evento
-- add every inserted row and subtract every deleted one in the statement's own transaction,
-- whoever writes (publication, retention, a test, an operator), so it cannot drift. A slice may go negative (retention subtracts from any
-- slice); only the sum of an hour's slices means something, and it is the hour's count.
alter table resumo_por_hora add column eventos_guardados integer not null default 0;

-- One upsert per hour the statement touched (a publication, or a batch of them: one), on a random
-- slice, so that concurrent publications rarely wait on the same row. It counts `eventos` (what
-- arrived in the hour, the summary's) too: a statement that locked two slices of an hour, one for
-- each count, could deadlock with another taking them in the other order. Hours in order, for the
-- same reason.
create function eventos_guardados_somar() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, eventos, eventos_guardados)
  select date_trunc('hour', recebido_em, 'UTC'), floor(random() * 16)::int, count(*), count(*)
    from novos group by 1 order by 1
  on conflict (hora, fatia) do update
    set eventos = resumo_por_hora.eventos + excluded.eventos,
        eventos_guardados = resumo_por_hora.eventos_guardados + excluded.eventos_guardados;
  return null;
end $$;

create function eventos_guardados_subtrair() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, eventos_guardados)
  select date_trunc('hour', recebido_em, 'UTC'), floor(random() * 16)::int, -count(*)
    from velhos group by 1 order by 1
  on conflict (hora, fatia) do update
    set eventos_guardados = resumo_por_hora.eventos_guardados + excluded.eventos_guardados;
  return null;
end $$;

-- An update (events are not updated today) moves the rows whose recebido_em changed to their new hour.
create function eventos_guardados_mover() returns trigger language plpgsql as $$
begin
  insert into resumo_por_hora (hora, fatia, eventos_guardados)
  select hora, floor(random() * 16)::int, sum(n)
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

create trigger evento_guardado after insert on evento
  referencing new table as novos for each statement execute function eventos_guardados_somar();
create trigger evento_apagado after delete on evento
  referencing old table as velhos for each statement execute function eventos_guardados_subtrair();
create trigger evento_movido after update on evento
  referencing old table as velhos new table as novos for each statement execute function eventos_guardados_mover();

-- The events stored before this migration, counted while no one can write evento.
lock table evento in share row exclusive mode;
insert into resumo_por_hora (hora, fatia, eventos_guardados)
select date_trunc('hour', recebido_em, 'UTC'), 0, count(*) from evento group by 1
on conflict (hora, fatia) do update set eventos_guardados = excluded.eventos_guardados;
