-- Destinations (DESIGN §4, Destino): one row per origin (scheme://host[:port]) that subscriptions
-- deliver to. hub-api adds the row of a subscription's origin in the transaction that creates or
-- moves the subscription; the delivery workers add the rows they meet without one, read the limits
-- and the pause every few seconds, and add their figures per minute.

-- The origin of a stored url_de_destino. Stored URLs are WHATWG-normalised (lower-case scheme and
-- host, default port dropped, no credentials), so this is the URL's `origin`.
create function origem_da_url(url text) returns text
  language sql immutable strict parallel safe
  return substring(url from '^[a-z][a-z0-9+.-]*://[^/?#]*');

create table destino (
  id                  uuid primary key,
  origem              text not null constraint destino_origem_unica unique,
  -- attempts in flight to this origin at once, over all workers together
  concorrencia_maxima integer not null default 10 check (concorrencia_maxima between 1 and 1000),
  -- attempts started per second, over all workers together; null: no limit
  limite_por_segundo  integer check (limite_por_segundo between 1 and 100000),
  -- paused: deliveries to it wait (no attempt is made or counted) until it is resumed
  pausado             boolean not null default false,
  criado_em           timestamptz(3) not null,
  atualizado_em       timestamptz(3) not null
);

-- What the workers saw per destination and minute, added by each worker (insert … on conflict add).
create table destino_minuto (
  destino_id uuid not null references destino (id) on delete cascade,
  minuto     timestamptz(3) not null,
  tentativas integer not null default 0 check (tentativas >= 0),
  falhas     integer not null default 0 check (falhas >= 0),
  -- attempts per duration bucket; upper bounds in ms: 5, 10, 25, 50, 100, 250, 500, 1000, 2500,
  -- 5000, 10000, and everything longer
  duracoes   integer[] not null check (cardinality(duracoes) = 12),
  primary key (destino_id, minuto)
);
create index destino_minuto_minuto on destino_minuto (minuto);

-- The figures of a page of destinations come from indexes, never from scanning deliveries.
create index assinatura_origem on assinatura (origem_da_url(url_de_destino)) where excluida_em is null;
create index entrega_em_andamento_origem on entrega (origem_da_url(url_de_destino)) where situacao = 'em_andamento';

-- The origins of the subscriptions that exist already. Ids are UUIDv7: the millisecond of now in
-- the first 48 bits of a random UUID, version nibble 7.
insert into destino (id, origem, criado_em, atualizado_em)
select
  encode(
    set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
      placing substring(int8send((extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
      from 1 for 6), 52, 1), 53, 1),
    'hex')::uuid,
  origem, now(), now()
from (select distinct origem_da_url(url_de_destino) as origem from assinatura where excluida_em is null) as origens
where origem is not null;
