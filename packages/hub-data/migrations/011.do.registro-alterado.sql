-- What publication reads and every hub-api process caches (applications, event types, schema
-- versions, subscriptions) announces its changes: a NOTIFY on the channel `registro_alterado`,
-- payload the table's name, sent by PostgreSQL when (and only if) the writing transaction commits.
-- A trigger, not a call in each use case, so that every writer is heard: hub-api, the delivery
-- worker switching a subscription off on a 410, a future service, a hand-written SQL fix.
-- Row-level: a statement that changes no row (the worker's record of attempts updates subscriptions
-- only after a 410) announces nothing. Identical notifications of one transaction are sent once.
create function registro_notificar() returns trigger language plpgsql as $$
begin
  perform pg_notify('registro_alterado', tg_table_name);
  return null;
end;
$$;

create trigger aplicativo_alterado after insert or update or delete on aplicativo
  for each row execute function registro_notificar();
create trigger tipo_de_evento_alterado after insert or update or delete on tipo_de_evento
  for each row execute function registro_notificar();
create trigger versao_de_esquema_alterada after insert or update or delete on versao_de_esquema
  for each row execute function registro_notificar();
create trigger assinatura_alterada after insert or update or delete on assinatura
  for each row execute function registro_notificar();

create trigger aplicativo_truncado after truncate on aplicativo
  for each statement execute function registro_notificar();
create trigger tipo_de_evento_truncado after truncate on tipo_de_evento
  for each statement execute function registro_notificar();
create trigger versao_de_esquema_truncada after truncate on versao_de_esquema
  for each statement execute function registro_notificar();
create trigger assinatura_truncada after truncate on assinatura
  for each statement execute function registro_notificar();
