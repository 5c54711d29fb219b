create table perfil_de_acesso (
  id            uuid primary key,
  nome          text not null check (char_length(nome) between 1 and 120),
  permissoes    jsonb not null,
  criado_em     timestamptz(3) not null,
  atualizado_em timestamptz(3) not null
);
create unique index perfil_de_acesso_nome_unico on perfil_de_acesso (lower(nome));

create table acesso (
  id                  uuid primary key,
  email               text not null check (char_length(email) <= 160 and email = lower(btrim(email))),
  perfil              text not null,
  ativo               boolean not null,
  master              boolean not null,
  termoauth_id        text,
  nome                text,
  perfil_de_acesso_id uuid references perfil_de_acesso (id),
  bloqueado_ate       timestamptz(3),
  ultimo_login_em     timestamptz(3),
  excluido_em         timestamptz(3),
  criado_em           timestamptz(3) not null,
  atualizado_em       timestamptz(3) not null
);
-- One live access per e-mail; deleted ones stay as records and free the address.
create unique index acesso_email_unico on acesso (email) where excluido_em is null;
create index acesso_ordem on acesso (perfil, email) where excluido_em is null;
create index acesso_email_busca on acesso (email text_pattern_ops) where excluido_em is null;
create index acesso_termoauth on acesso (termoauth_id) where termoauth_id is not null;
create index acesso_perfil_de_acesso on acesso (perfil_de_acesso_id) where perfil_de_acesso_id is not null;

-- Projection of the identity service's collaborators, kept from its synchronisation messages.
create table colaborador (
  termoauth_id  text primary key,
  email         text not null,
  nome          text not null,
  funcao_id     text,
  ativo         boolean not null,
  removido      boolean not null,
  versao        bigint not null,
  atualizado_em timestamptz(3) not null
);
create index colaborador_email on colaborador (email) where not removido;
