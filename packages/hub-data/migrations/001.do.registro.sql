-- The registry of the hub: applications, event types, schema versions and subscriptions.
-- Events, deliveries, attempts, refused events, reprocessing and the outbox come in later
-- migrations and refer to these tables (DESIGN §5).

create table aplicativo (
  id            uuid primary key,
  -- ordered as a Portuguese reader expects ("Árvore" between "abacate" and "Banana")
  nome          text collate "pt-BR-x-icu" not null check (char_length(nome) between 1 and 120),
  -- the `sub` of the application's tokens
  client_id     text not null check (client_id ~ '^[\x21-\x7e]{1,200}$'),
  ativo         boolean not null,
  criado_em     timestamptz(3) not null,
  atualizado_em timestamptz(3) not null
);
create unique index aplicativo_client_id_unico on aplicativo (client_id);
create index aplicativo_ordem on aplicativo (nome, id);

create table tipo_de_evento (
  id               uuid primary key,
  -- lower-case ASCII only, so byte order is the natural order
  nome             text collate "C" not null check (char_length(nome) <= 200 and nome ~ '^[a-z0-9_]+(\.[a-z0-9_]+)*$'),
  descricao        text check (char_length(descricao) <= 2000),
  -- the owner: the only application that publishes events of this type
  aplicativo_id    uuid not null references aplicativo (id),
  ativo            boolean not null,
  retencao_em_dias integer not null check (retencao_em_dias between 1 and 3650),
  criado_em        timestamptz(3) not null,
  atualizado_em    timestamptz(3) not null
);
create unique index tipo_de_evento_nome_unico on tipo_de_evento (nome);
create index tipo_de_evento_aplicativo on tipo_de_evento (aplicativo_id);

create table versao_de_esquema (
  id                uuid primary key,
  tipo_de_evento_id uuid not null references tipo_de_evento (id),
  versao            integer not null check (versao >= 1),
  -- json, not jsonb: the schema is served back exactly as registered (key order included)
  esquema           json not null,
  descricao         text check (char_length(descricao) <= 2000),
  ativa             boolean not null,
  criado_em         timestamptz(3) not null,
  atualizado_em     timestamptz(3) not null,
  constraint versao_de_esquema_numero_unico unique (tipo_de_evento_id, versao)
);

-- A version's schema never changes: the database refuses it even if a bug tried.
create function versao_de_esquema_imutavel() returns trigger language plpgsql as $$
begin
  if new.esquema::text <> old.esquema::text or new.versao <> old.versao or new.tipo_de_evento_id <> old.tipo_de_evento_id then
    raise exception 'the schema of a version never changes' using errcode = 'check_violation';
  end if;
  return new;
end;
$$;
create trigger versao_de_esquema_imutavel before update on versao_de_esquema
  for each row execute function versao_de_esquema_imutavel();

create table assinatura (
  id                      uuid primary key,
  aplicativo_assinante_id uuid not null references aplicativo (id),
  tipo_de_evento_id       uuid not null,
  versao_do_esquema       integer not null,
  url_de_destino          text not null check (char_length(url_de_destino) <= 2048),
  maximo_de_tentativas    integer not null check (maximo_de_tentativas between 1 and 50),
  ativa                   boolean not null,
  -- logical deletion: deliveries keep pointing at a deleted subscription
  excluida_em             timestamptz(3),
  criado_em               timestamptz(3) not null,
  atualizado_em           timestamptz(3) not null,
  constraint assinatura_versao foreign key (tipo_de_evento_id, versao_do_esquema)
    references versao_de_esquema (tipo_de_evento_id, versao)
);
create unique index assinatura_unica on assinatura (aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino)
  where excluida_em is null;
-- What a publication reads: the active subscriptions of a type and version.
create index assinatura_ativas on assinatura (tipo_de_evento_id, versao_do_esquema) where ativa and excluida_em is null;
create index assinatura_assinante on assinatura (aplicativo_assinante_id) where excluida_em is null;
