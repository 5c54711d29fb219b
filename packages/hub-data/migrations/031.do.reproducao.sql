-- Replays (reproducao): the stored events of a time range delivered again to one subscription
-- (docs/decisions/replay-engine.md). A replay is a durable job: hub-api's runner walks the events of
-- the subscription's type and version in (recebido_em, id) order, one batch per transaction, and that
-- transaction writes the batch's deliveries, their outbox rows, the counters and the cursor together,
-- so a process killed mid-batch leaves the replay where its last committed batch put it.

create table reproducao (
  id                    uuid primary key,
  -- deleted with the subscription only if a subscription row is ever erased (they are soft-deleted)
  assinatura_id         uuid not null references assinatura (id) on delete cascade,
  desde                 timestamptz(3) not null,
  ate                   timestamptz(3) not null,
  incluir_entregues     boolean not null default false,
  situacao              text not null check (situacao in ('pendente', 'em_andamento', 'concluida', 'cancelada')),
  -- stored events of the type and version received in [desde, ate] when it was asked (before the filter)
  quantidade_de_eventos integer not null default 0 check (quantidade_de_eventos >= 0),
  criadas               integer not null default 0 check (criadas >= 0),
  reenviadas            integer not null default 0 check (reenviadas >= 0),
  ignoradas             integer not null default 0 check (ignoradas >= 0),
  -- the panel user's e-mail, or the client_id of the application whose token asked
  solicitada_por        text not null check (char_length(solicitada_por) between 1 and 320),
  -- the (recebido_em, id) of the last event handled, committed with its batch
  cursor_recebido_em    timestamptz(3),
  cursor_evento_id      uuid,
  -- the deliveries the last batch created or resent: the next batch waits while too many of them are
  -- still in the queue (the destination's own pace)
  em_voo                uuid[] not null default '{}',
  criada_em             timestamptz(3) not null,
  atualizada_em         timestamptz(3) not null,
  concluida_em          timestamptz(3),
  constraint reproducao_intervalo check (desde <= ate)
);
-- GET /reproducao, newest first, alone or for one subscription.
create index reproducao_criada on reproducao (criada_em desc, id desc);
create index reproducao_assinatura on reproducao (assinatura_id, criada_em desc, id desc);
-- What the runner looks for: replays not yet final, oldest first.
create index reproducao_aberta on reproducao (criada_em, id) where situacao in ('pendente', 'em_andamento');
