-- Outbox rows looked up by their AMQP message-id: hub-api's retention erases the delivery jobs of
-- the deliveries it erases (`where message_id in (…)`), which without this index reads the whole
-- outbox once per batch. Copies: services/*/migrations (the ddl-agreement test compares them).
create index outbox_mensagem on outbox (message_id);
