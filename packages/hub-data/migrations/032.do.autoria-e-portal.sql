-- Subscriptions of one's own and the subscribers' portal (docs/decisions/subscribers-portal.md).
--
-- Who last changed a subscription, and when: an operator of the panel (by e-mail) or the subscribing
-- application itself (by client_id), at its creation, each change and its deletion. Rows written
-- before this migration name nobody (null): who made them was not kept. Nullable columns without a
-- default rewrite nothing: the ALTER holds its lock for a moment only.
alter table assinatura
  add column alterada_por_tipo text
    constraint assinatura_alterada_por_tipo check (alterada_por_tipo in ('aplicativo', 'operador')),
  add column alterada_por text,
  add column alterada_em timestamptz(3),
  add constraint assinatura_autoria_completa check (
    (alterada_por_tipo is null) = (alterada_por is null) and (alterada_por is null) = (alterada_em is null)
  );

-- A portal link: an opaque token (only its SHA-256 is stored) that opens the subscriber routes of
-- one application until expira_em, or until DELETE /aplicativo/{id}/portal sets revogado_em on
-- every link of that application. Each request through a link reads its row (no cache), so a
-- revocation holds on every replica at the next request.
create table link_do_portal (
  id uuid primary key,
  aplicativo_id uuid not null references aplicativo (id),
  token_sha256 text not null constraint link_do_portal_token_unico unique,
  expira_em timestamptz(3) not null,
  revogado_em timestamptz(3),
  criado_pelo_email text not null,
  criado_em timestamptz(3) not null
);
-- The revocation's and the clean-up's way to an application's links.
create index link_do_portal_aplicativo on link_do_portal (aplicativo_id, expira_em);
