-- Requests to reprocess deliveries of the error queue (DESIGN §4, Solicitação de reprocessamento),
-- and the indexes that keep the delivery routes fast on millions of rows.

create table solicitacao_de_reprocessamento (
  id                     uuid primary key,
  situacao               text not null check (situacao in ('pendente', 'em_andamento', 'concluida', 'cancelada')),
  -- what was asked: a list of delivery ids (a JSON array of uuid strings), or a filter (null list)
  entrega_ids            jsonb,
  assinatura_id          uuid,
  tipo_de_evento_id      uuid,
  desde                  timestamptz(3),
  ate                    timestamptz(3),
  -- deliveries in fila_de_erro that matched when the request was made
  quantidade_de_entregas integer not null default 0 check (quantidade_de_entregas >= 0),
  -- moved to a new cycle so far, and skipped (their subscription is switched off or deleted)
  reprocessadas          integer not null default 0 check (reprocessadas >= 0),
  ignoradas              integer not null default 0 check (ignoradas >= 0),
  -- where the batches are: the (criada_em, id) of the last delivery handled, committed with its batch,
  -- so a restarted hub-api goes on from there
  cursor_criada_em       timestamptz(3),
  cursor_id              uuid,
  solicitada_pelo_email  text check (char_length(solicitada_pelo_email) <= 320),
  criada_em              timestamptz(3) not null,
  atualizada_em          timestamptz(3) not null,
  iniciada_em            timestamptz(3),
  concluida_em           timestamptz(3)
);
create index solicitacao_de_reprocessamento_criada on solicitacao_de_reprocessamento (criada_em desc, id desc);
-- What the background runner claims: requests not yet final, oldest first.
create index solicitacao_de_reprocessamento_aberta on solicitacao_de_reprocessamento (criada_em, id)
  where situacao in ('pendente', 'em_andamento');

-- The error queue by subscription, type and subscriber, oldest first: the batches of a reprocessing
-- filter walk these forward, and GET /entrega?situacao=fila_de_erro&assinatura_id=… walks them backwards.
create index entrega_erro_assinatura on entrega (assinatura_id, criada_em, id) where situacao = 'fila_de_erro';
create index entrega_erro_tipo on entrega (tipo_de_evento_id, criada_em, id) where situacao = 'fila_de_erro';
create index entrega_erro_assinante on entrega (aplicativo_assinante_id, criada_em, id) where situacao = 'fila_de_erro';
-- The deliveries of one event in list order (GET /entrega?evento_id=…).
create index entrega_evento_criada on entrega (evento_id, criada_em desc, id desc);
