-- The shape of a subscription's deliveries: standard-webhooks (the hub's own body, what every
-- subscription had before) or cloudevents (the CloudEvents 1.0 structured-mode body, signed with the
-- same headers). A constant default rewrites nothing: the ALTER holds its lock for a moment only.

alter table assinatura add column formato text not null default 'standard-webhooks'
  constraint assinatura_formato check (formato in ('standard-webhooks', 'cloudevents'));
