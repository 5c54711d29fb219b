-- The outbox of delivery jobs: a copy of packages/outbox/sql/001.do.outbox.sql (packages/outbox's
-- ddl-agreement test proves the copies agree).

create table outbox (
  id           uuid primary key,
  exchange     text not null,
  routing_key  text not null,
  -- AMQP message-id; consumers use it to drop the duplicates an at-least-once relay can send
  message_id   text not null,
  -- json, not jsonb: kept byte for byte as written (what is published is what was stored), and
  -- cheaper to write in bulk (no conversion to the binary form)
  body         json not null,
  headers      jsonb,
  criado_em    timestamptz(3) not null default now(),
  publicado_em timestamptz(3),
  tentativas   integer not null default 0,
  ultimo_erro  text
);
-- What the relay claims: pending rows, oldest first.
create index outbox_pendente on outbox (tentativas, criado_em, id) where publicado_em is null;
-- What the retention purge deletes.
create index outbox_publicado on outbox (publicado_em) where publicado_em is not null;

-- One NOTIFY per inserting statement (not per row): an INSERT … SELECT of 10,000 rows wakes the
-- relays once, at commit.
create or replace function outbox_notificar() returns trigger language plpgsql as $$
begin
  perform pg_notify(tg_table_name, '');
  return null;
end;
$$;
create trigger outbox_inserido after insert on outbox for each statement execute function outbox_notificar();
