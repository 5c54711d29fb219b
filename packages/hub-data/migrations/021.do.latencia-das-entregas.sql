-- The latency of deliveries in the summary (docs/decisions.md "The latency of deliveries in the
-- summary"): per hour of conclusion and slice (as resumo_por_hora), how many concluded deliveries
-- took a latency in each bucket, from the event's acceptance to the delivery's conclusion. The
-- buckets are fixed (packages/hub-data/src/latencia.ts: 8 per doubling of the milliseconds, bucket 0
-- = 0 ms, the last one from 2^32 ms on), so an hour's percentiles are read from the sum of its
-- slices' buckets, however many deliveries it had. The worker adds to it in the statement that
-- records attempts: one upsert per bucket a batch touches, in bucket order (two batches on the same
-- slice lock its rows in the same order).
create table resumo_latencia_por_hora (
  hora     timestamptz(3) not null,
  fatia    integer not null check (fatia between 0 and 15),
  balde    integer not null check (balde between 0 and 239),
  entregas integer not null default 0 check (entregas >= 0),
  primary key (hora, fatia, balde)
);
