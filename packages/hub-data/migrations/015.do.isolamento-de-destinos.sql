-- Fair scheduling across destinations (issue 24; architecture §5, "Fair scheduling"; docs/decisions.md).
--
-- A destination held back (paused, circuit open) or backlogged gets a queue of its own,
-- delivery-worker.destino.<id>, bound to hub.entregas by the routing key destino.<id>, so its jobs
-- stop holding up the shared work queue. Its row says where its jobs go:
--   isolamento null          the shared work queue (the queue of its own, if any, is gone);
--              'isolada'     its own queue: hub-api's outbox relay routes new jobs there and the
--                            workers forward there any job of it met in the shared queue;
--              'saindo'      going back: nothing new is routed or forwarded there, the workers still
--                            consume it for a grace period, then stop;
--              'removendo'   one worker unbinds the queue, moves what is left to the shared queue and
--                            deletes it (taken over by another if it has not finished in a while).
-- isolamento_desde: when the current state began (for null: when the destination left its queue;
-- the sweeper leaves its jobs alone for a while after that, as after a resume).
-- isolamento_motivo: why it was isolated: 'retida' (paused or circuit open) or 'acumulo' (a backlog).
alter table destino
  add column isolamento text check (isolamento in ('isolada', 'saindo', 'removendo')),
  add column isolamento_desde timestamptz(3),
  add column isolamento_motivo text check (isolamento_motivo in ('retida', 'acumulo'));

-- hub-api's relay keeps the set of isolated destinations in memory; it hears a change at commit
-- (and reloads the set every HUB_CACHE_TTL in case a notification was missed).
create function destino_isolamento_notificar() returns trigger language plpgsql as $$
begin
  perform pg_notify('destino_isolamento', new.origem);
  return null;
end;
$$;

create trigger destino_isolamento_alterado after update of isolamento on destino
  for each row when (old.isolamento is distinct from new.isolamento)
  execute function destino_isolamento_notificar();
