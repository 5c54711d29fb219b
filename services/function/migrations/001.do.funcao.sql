-- Database hub_function: the function registry, the projection of the identity service's
-- collaborators, and the outbox of the platform events this service announces.

-- UUIDv7 (RFC 9562) in SQL, for rows created in bulk by INSERT … SELECT (PostgreSQL < 18 has none):
-- 48 bits of unix milliseconds over a random v4, version nibble set to 7.
create or replace function uuid_v7() returns uuid language sql volatile as $$
  select encode(
    set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
      placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
      from 1 for 6), 52, 1), 53, 1), 'hex')::uuid
$$;

create table funcao (
  id            uuid primary key,
  nome          text not null check (char_length(nome) between 1 and 120 and nome = btrim(nome)),
  criado_em     timestamptz(3) not null,
  atualizado_em timestamptz(3) not null
);
-- Unique without regard to case, in the database: of two concurrent creations only one can win.
create unique index funcao_nome_unico on funcao (lower(nome));
-- Alphabetical order as a Portuguese reader expects it (case and accents do not scatter names).
create index funcao_nome_ordem on funcao ((nome collate "pt-BR-x-icu"), id);

-- The identity service's collaborators, kept from its synchronisation messages. A removed one stays
-- as a tombstone (removido) with its versao, so an older message cannot bring it back.
create table colaborador (
  termoauth_id  text primary key,
  email         text not null,
  nome          text not null,
  funcao_id     text,
  ativo         boolean not null,
  removido      boolean not null,
  versao        bigint not null,
  -- The collaborator's members of an announcement's `dados` as JSON text
  -- ("termoauth_id":…,"email":…,"nome":…,"ativo":…), written with each change, so that a rename
  -- only glues fragments together for each of its (possibly 10,000) collaborators.
  anuncio       text not null,
  atualizado_em timestamptz(3) not null
);
create index colaborador_funcao on colaborador (funcao_id, ativo) where not removido;

-- Outbox (the shape of @hub/outbox, sql/001.do.outbox.sql).
create table outbox (
  id           uuid primary key,
  exchange     text not null,
  routing_key  text not null,
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
create index outbox_pendente on outbox (tentativas, criado_em, id) where publicado_em is null;
create index outbox_publicado on outbox (publicado_em) where publicado_em is not null;
create or replace function outbox_notificar() returns trigger language plpgsql as $$
begin
  perform pg_notify(tg_table_name, '');
  return null;
end;
$$;
create trigger outbox_inserido after insert on outbox for each statement execute function outbox_notificar();
