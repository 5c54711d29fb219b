import { prismaStatement } from '@hub/database';
import type { LinhaDeEvento } from './eventos.repository';

// The panel's lists of events (eventos.repository.ts), run on Prisma, checked by publicacao/sql.test.ts.

/** An event's columns with its names, of the rows `p` (id, recebido_em) joined to evento `e`. */
export const COLUNAS_COM_NOMES = `e.id::text, e.tipo_de_evento_id::text, t.nome as tipo_de_evento_nome, e.versao_do_esquema,
         e.aplicativo_publicador_id::text, a.nome as aplicativo_publicador_nome, e.entidade_id,
         e.ocorrido_em, e.recebido_em, e.publicado_pelo_email`;

/** The joins of COLUNAS_COM_NOMES after `from (…) p`, and the rows' order, newest received first. */
export const JUNCOES_DOS_NOMES = `join evento e on e.id = p.id
    join tipo_de_evento t on t.id = e.tipo_de_evento_id
    join aplicativo a on a.id = e.aplicativo_publicador_id
   order by p.recebido_em desc, p.id desc`;

/** The rows of `ids` (a subquery of id and recebido_em) with their names, in the list's order. */
const comNomes = (ids: string) => `select ${COLUNAS_COM_NOMES}
    from (${ids}) p
    ${JUNCOES_DOS_NOMES}`;

/** An event's columns as its lists and its detail read them (publication's detail adds `dados`). */
export const COLUNAS_DO_EVENTO = {
  id: 'text',
  tipo_de_evento_id: 'text',
  tipo_de_evento_nome: 'text',
  versao_do_esquema: 'int4',
  aplicativo_publicador_id: 'text',
  aplicativo_publicador_nome: 'text',
  entidade_id: 'text',
  ocorrido_em: 'timestamptz',
  recebido_em: 'timestamptz',
  publicado_pelo_email: 'text',
} as const;

/**
 * A page of $2 events after the $1 newest, newest received first, identical to `order by
 * recebido_em desc, id desc offset $1`, but the offset is not walked from the newest event.
 * resumo_por_hora.eventos_guardados holds the exact number of stored events of each hour (triggers
 * on evento, migration 005): a running sum over the hours, newest first, finds the hour the offset
 * lands in and how many events are newer than it; the index scan of evento_recebido then starts at
 * the end of that hour (keyset on recebido_em) and skips only the rest of the offset inside it, at
 * most one hour of events. One statement, so the counts and the rows come from one snapshot. An
 * offset past the last event finds no hour and no rows. Only the page's ids are joined to the names.
 */
export const EVENTO_PAGINA = prismaStatement<LinhaDeEvento>({
  name: 'evento_pagina',
  text: comNomes(`
    with horas as (
      select hora, sum(eventos_guardados) as n from resumo_por_hora group by hora having sum(eventos_guardados) > 0
    ), acumuladas as (
      select hora, n, sum(n) over (order by hora desc) - n as mais_novos from horas
    ), alvo as (
      select hora, mais_novos from acumuladas
       where mais_novos <= $1::bigint and $1::bigint < mais_novos + n
    )
    select id, recebido_em from evento
     where recebido_em < (select hora + interval '1 hour' from alvo)
     order by recebido_em desc, id desc
    offset $1::bigint - (select mais_novos from alvo) limit $2`),
  parameters: ['int8', 'int8'],
  columns: COLUNAS_DO_EVENTO,
});

/**
 * Every match (at most $7), newest received first, through the filter's index: id $1, type $2,
 * publisher $3, entity $4, received from $5 to $6, each unset when null. Prisma plans each run with
 * its values, so a null filter's `is null` is decided then and a set one's index is used as before.
 */
export const EVENTO_FILTRO = prismaStatement<LinhaDeEvento>({
  name: 'evento_filtro',
  text: comNomes(`select id, recebido_em from evento
     where ($1::uuid is null or id = $1::uuid)
       and ($2::uuid is null or tipo_de_evento_id = $2::uuid)
       and ($3::uuid is null or aplicativo_publicador_id = $3::uuid)
       and ($4::text is null or entidade_id = $4::text)
       and ($5::timestamptz is null or recebido_em >= $5::timestamptz)
       and ($6::timestamptz is null or recebido_em <= $6::timestamptz)
     order by recebido_em desc, id desc limit $7`),
  parameters: ['uuid', 'uuid', 'uuid', 'text', 'timestamptz', 'timestamptz', 'int8'],
  columns: COLUNAS_DO_EVENTO,
});
