-- Profile names are unique as people see them: without regard to case and without the characters
-- that occupy no space on screen (soft hyphen, Mongolian vowel separator, zero-width space,
-- non-joiner and joiner, word joiner, BOM): the class of nomeChave in @hub/http. The E-string
-- turns each \uXXXX into the character itself, whatever standard_conforming_strings says.

-- Profiles that only now collide with an older one keep working under a name made unique by their id.
update perfil_de_acesso p
set nome = left(p.nome, 106) || ' #' || right(p.id::text, 12)
where exists (
  select 1 from perfil_de_acesso o
  where lower(regexp_replace(o.nome, E'[\u00AD\u180E\u200B-\u200D\u2060\uFEFF]', '', 'g'))
      = lower(regexp_replace(p.nome, E'[\u00AD\u180E\u200B-\u200D\u2060\uFEFF]', '', 'g'))
    and (o.criado_em, o.id) < (p.criado_em, p.id)
);

drop index perfil_de_acesso_nome_unico;
-- Listed as a Portuguese reader expects (abacate, Árvore, Banana), like the function registry.
alter table perfil_de_acesso alter column nome type text collate "pt-BR-x-icu";
create unique index perfil_de_acesso_nome_unico
  on perfil_de_acesso (lower(regexp_replace(nome, E'[\u00AD\u180E\u200B-\u200D\u2060\uFEFF]', '', 'g')));
