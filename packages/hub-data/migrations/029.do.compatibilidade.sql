-- The rule a type's next schema version is checked by against its latest: none (no check, what every
-- type did before), backward, forward or full (docs/contract.md §10). Adding a column with a constant
-- default rewrites nothing (PostgreSQL 11+): the ALTER holds its lock for a moment only.

alter table tipo_de_evento add column compatibilidade text not null default 'none'
  constraint tipo_de_evento_compatibilidade check (compatibilidade in ('none', 'backward', 'forward', 'full'));
