-- A subscription's content filter (POST and PATCH /assinatura): a JSON object that publication
-- evaluates against each delivery body; null delivers every event. hub-api checks it (operators,
-- limits: at most 4 KiB, 8 levels, 64 conditions) before it is written, compiles it once per
-- process and caches it with the active subscriptions (docs/decisions.md, "Content filters on
-- subscriptions"). A change is announced by the trigger of migration 011 like any other update.
alter table assinatura add column filtro jsonb;
