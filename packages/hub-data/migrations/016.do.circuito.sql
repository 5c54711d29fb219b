-- A circuit breaker per destination origin (issue 24; docs/decisions.md, "A circuit breaker per
-- destination"). The state lives in the destino row, which every delivery worker reads with each
-- refresh of the destinations, so all of them obey it; its transitions are conditional UPDATEs.
--
-- circuito: fechado (attempts as usual), aberto (its jobs wait in a delay queue, no attempt made or
--   counted, until circuito_aberto_ate), meio_aberto (one probe, a real delivery, is under way).
-- circuito_desde: when the state last changed; null: it never left fechado.
-- circuito_aberturas: openings in a row without a close; each opening lasts twice the one before,
--   up to a cap (the workers' DELIVERY_CIRCUIT_OPEN_FOR and DELIVERY_CIRCUIT_OPEN_MAX).
-- circuito_sonda / circuito_sonda_ate: the probe's lease, a random token of the worker attempting it
--   and its end. Only the holder's result closes or re-opens the circuit; once the lease ends (its
--   worker died) another worker may take the probe.
alter table destino
  add column circuito text not null default 'fechado' check (circuito in ('fechado', 'aberto', 'meio_aberto')),
  add column circuito_desde timestamptz(3),
  add column circuito_aberto_ate timestamptz(3),
  add column circuito_aberturas integer not null default 0 check (circuito_aberturas >= 0),
  add column circuito_sonda uuid,
  add column circuito_sonda_ate timestamptz(3);

-- Each transition of a destination's circuit: when, from and to which state, why (a stable word in
-- motivo, a sentence in detalhe, the failures counted when it opened) and who closed it by hand.
create table destino_circuito (
  id         uuid primary key,
  destino_id uuid not null references destino (id) on delete cascade,
  em         timestamptz(3) not null,
  de         text not null check (de in ('fechado', 'aberto', 'meio_aberto')),
  para       text not null check (para in ('fechado', 'aberto', 'meio_aberto')),
  -- falhas, periodo_encerrado, sonda_expirada, sonda_bem_sucedida, sonda_falhou, manual
  motivo     text not null,
  detalhe    text not null,
  falhas     integer,
  tentativas integer,
  -- an opening: until when (the earliest moment of the next probe)
  aberto_ate timestamptz(3),
  -- a close by hand: the operator's e-mail
  por        text
);
create index destino_circuito_destino on destino_circuito (destino_id, em desc, id desc);

-- The history is bounded: each insert keeps the destination's 50 latest transitions (writers are
-- hub-api and the workers; one trigger trims for both).
create function destino_circuito_aparar() returns trigger
  language plpgsql as $$
begin
  delete from destino_circuito
   where id in (select id from destino_circuito
                 where destino_id = new.destino_id
                 order by em desc, id desc
                offset 50);
  return null;
end $$;

create trigger destino_circuito_aparar after insert on destino_circuito
  for each row execute function destino_circuito_aparar();
