-- The operators' filters of GET /tentativa (DESIGN §4, Tentativa): each leads with its column, then
-- the list's order, so a filtered page reads only its rows. entrega_id is served by
-- tentativa_numero_unico; assinatura_id goes through entrega_assinatura.
create index tentativa_status on tentativa (status_http, iniciada_em desc, id desc);
create index tentativa_sucesso on tentativa (sucesso, iniciada_em desc, id desc);
