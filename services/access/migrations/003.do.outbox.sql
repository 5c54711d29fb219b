-- The outbox of acesso.alterado (the shape of @hub/outbox, sql/001.do.outbox.sql and
-- sql/002.do.outbox-mensagem.sql): a change of an access or a profile writes its announcement here in
-- its own transaction, and the relay publishes it once committed
-- (docs/decisions/access-announced-through-an-outbox.md).
create table outbox (
  id           uuid primary key,
  exchange     text not null,
  routing_key  text not null,
  message_id   text not null,
  body         json not null,
  headers      jsonb,
  criado_em    timestamptz(3) not null default now(),
  publicado_em timestamptz(3),
  tentativas   integer not null default 0,
  ultimo_erro  text
);
create index outbox_pendente on outbox (tentativas, criado_em, id) where publicado_em is null;
create index outbox_publicado on outbox (publicado_em) where publicado_em is not null;
create or replace function outbox_notificar() returns trigger language plpgsql as $$
begin
  perform pg_notify(tg_table_name, '');
  return null;
end;
$$;
create trigger outbox_inserido after insert on outbox for each statement execute function outbox_notificar();
create index outbox_mensagem on outbox (message_id);
