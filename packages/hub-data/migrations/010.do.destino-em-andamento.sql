-- Attempts in flight per destination as the delivery workers report them (DESIGN §4, Destino:
-- em_andamento). Each worker process writes its own row per origin with every refresh of the
-- destinations (DELIVERY_DESTINOS_REFRESH), valid for three refreshes, and deletes its rows when it
-- stops; GET /destino sums the rows still valid, so a worker killed without stopping drops out of the
-- sum by itself. Counting deliveries em_andamento per origin instead read an index that the workers
-- churn thousands of times a second (slow while they drain, and a cost on every delivery written).
create table destino_em_andamento (
  destino_id   uuid not null references destino (id) on delete cascade,
  -- the worker process (a random id per start)
  processo     uuid not null,
  em_andamento integer not null check (em_andamento >= 0),
  valido_ate   timestamptz(3) not null,
  primary key (destino_id, processo)
);

drop index entrega_em_andamento_origem;
