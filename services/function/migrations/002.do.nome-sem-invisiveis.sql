-- Two function names that differ only by characters that occupy no space on screen (soft hyphen,
-- Mongolian vowel separator, zero-width space/non-joiner/joiner, word joiner, BOM) look the same, so
-- they are the same name: `pz-x` and `pz-x` + U+200B conflict. The class is nomeChave's (@hub/http);
-- the E'' string makes PostgreSQL read the \u escapes as those characters.
drop index funcao_nome_unico;
create unique index funcao_nome_unico
  on funcao (lower(regexp_replace(nome, E'[\u00AD\u180E\u200B-\u200D\u2060\uFEFF]', '', 'g')));
