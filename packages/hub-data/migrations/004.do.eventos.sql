-- Events, their deliveries and attempts, refused publications, idempotency keys and the hourly
-- tallies of the summary (DESIGN §5). Publication writes an event, its deliveries, their outbox
-- rows, its idempotency key and its tally in ONE transaction.

create table evento (
  id                       uuid primary key,
  tipo_de_evento_id        uuid not null,
  versao_do_esquema        integer not null,
  aplicativo_publicador_id uuid not null references aplicativo (id),
  entidade_id              text not null check (char_length(entidade_id) between 1 and 200),
  ocorrido_em              timestamptz(3) not null,
  recebido_em              timestamptz(3) not null,
  -- who published from the panel (POST /evento); null for applications and the platform
  publicado_pelo_email     text check (char_length(publicado_pelo_email) <= 320),
  -- json, not jsonb: subscribers receive dados exactly as the publisher sent it (every digit of a
  -- 20-digit integer, the order of keys)
  dados                    json not null,
  constraint evento_versao foreign key (tipo_de_evento_id, versao_do_esquema)
    references versao_de_esquema (tipo_de_evento_id, versao)
);
-- Newest received first, alone or under each exact filter of GET /evento/filtro.
create index evento_recebido on evento (recebido_em desc, id desc);
create index evento_tipo on evento (tipo_de_evento_id, recebido_em desc, id desc);
create index evento_publicador on evento (aplicativo_publicador_id, recebido_em desc, id desc);
create index evento_entidade on evento (entidade_id, recebido_em desc, id desc);

create table entrega (
  id                        uuid primary key,
  evento_id                 uuid not null references evento (id) on delete cascade,
  -- copied from the event and the subscription at creation, so that a delivery job, the filters
  -- and the lists need no join
  evento_recebido_em        timestamptz(3) not null,
  entidade_id               text not null,
  assinatura_id             uuid not null references assinatura (id),
  aplicativo_assinante_id   uuid not null references aplicativo (id),
  tipo_de_evento_id         uuid not null,
  versao_do_esquema         integer not null,
  url_de_destino            text not null,
  situacao                  text not null check (situacao in
    ('pendente', 'em_andamento', 'aguardando_nova_tentativa', 'concluida', 'fila_de_erro', 'cancelada')),
  quantidade_de_tentativas  integer not null default 0 check (quantidade_de_tentativas >= 0),
  tentativas_no_ciclo_atual integer not null default 0 check (tentativas_no_ciclo_atual >= 0),
  maximo_de_tentativas      integer not null check (maximo_de_tentativas between 1 and 50),
  proxima_tentativa_em      timestamptz(3) not null,
  entregue_em               timestamptz(3),
  ultimo_erro               text check (char_length(ultimo_erro) <= 2000),
  criada_em                 timestamptz(3) not null,
  atualizada_em             timestamptz(3) not null
);
create index entrega_evento on entrega (evento_id);
-- The queue as the summary and the sweeper see it: only deliveries not yet final.
create index entrega_em_aberto on entrega (situacao, proxima_tentativa_em)
  where situacao in ('pendente', 'em_andamento', 'aguardando_nova_tentativa', 'fila_de_erro');
create index entrega_assinatura on entrega (assinatura_id, criada_em desc, id desc);
create index entrega_assinante on entrega (aplicativo_assinante_id, criada_em desc, id desc);
create index entrega_tipo on entrega (tipo_de_evento_id, criada_em desc, id desc);
create index entrega_situacao on entrega (situacao, criada_em desc, id desc);
create index entrega_criada on entrega (criada_em desc, id desc);

create table tentativa (
  id           uuid primary key,
  entrega_id   uuid not null references entrega (id) on delete cascade,
  -- 1, 2, 3… over the whole life of the delivery (every cycle)
  numero       integer not null check (numero >= 1),
  iniciada_em  timestamptz(3) not null,
  duracao_ms   integer not null check (duracao_ms >= 0),
  -- null when no answer came (timeout, refused connection, unsafe destination)
  status_http  integer check (status_http between 100 and 999),
  sucesso      boolean not null,
  -- the answer's body, truncated to 64 KiB
  resposta     text,
  erro         text check (char_length(erro) <= 2000),
  -- the headers sent (signatures included; never a key)
  cabecalhos   jsonb not null default '{}',
  constraint tentativa_numero_unico unique (entrega_id, numero)
);
create index tentativa_iniciada on tentativa (iniciada_em desc, id desc);

create table evento_recusado (
  id                   uuid primary key,
  codigo               text not null,
  status_http          integer not null check (status_http between 400 and 499),
  detalhe              text not null,
  -- [{ caminho, mensagem }], at most 50
  erros                jsonb not null default '[]',
  -- the body received as text, truncated to 64 KiB (NUL written as \u0000, which text cannot hold)
  corpo                text,
  corpo_truncado       boolean not null default false,
  -- what the body named, when it could be read (no foreign key: it may name nothing that exists)
  tipo_de_evento_id    uuid,
  versao_do_esquema    integer,
  -- who sent it: an application (token) or a panel user (e-mail)
  aplicativo_id        uuid,
  client_id            text,
  publicado_pelo_email text,
  recebido_em          timestamptz(3) not null
);
create index evento_recusado_recebido on evento_recusado (recebido_em desc, id desc);
create index evento_recusado_codigo on evento_recusado (codigo, recebido_em desc, id desc);
create index evento_recusado_aplicativo on evento_recusado (aplicativo_id, recebido_em desc, id desc);

-- Idempotency-Key of POST /eventos and POST /evento: the same key of the same publisher within 24 h
-- answers the first event again. Written in the publication's transaction, so two concurrent
-- requests with one key make one event (the second waits on the primary key, then reads it).
create table chave_de_idempotencia (
  -- 'aplicativo:<id>' or 'usuario:<e-mail>': keys of different publishers never meet
  escopo     text not null,
  chave      text not null check (char_length(chave) between 1 and 255),
  -- sha-256 of the request body: the same key with another body is refused
  impressao  text not null,
  evento_id  uuid not null,
  criada_em  timestamptz(3) not null,
  primary key (escopo, chave)
);
create index chave_de_idempotencia_criada on chave_de_idempotencia (criada_em);

-- The summary's hourly tallies, incremented in the same transaction as what they count (never a
-- tally that can drift). Several slices per hour so concurrent publications do not queue on one row;
-- a read sums the slices.
create table resumo_por_hora (
  hora                 timestamptz(3) not null,
  fatia                integer not null check (fatia between 0 and 15),
  eventos              integer not null default 0,
  recusados            integer not null default 0,
  entregas_concluidas  integer not null default 0,
  tentativas_com_falha integer not null default 0,
  primary key (hora, fatia)
);
