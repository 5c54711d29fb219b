import { prismaStatement } from '@hub/database';
import type { FuncaoRow } from './funcoes.repository';

// The functions' statements, run on Prisma (runOnPrisma), checked by src/sql.test.ts. A search ($1)
// is optional: null finds every function. Prisma sends each as an unnamed statement, planned with
// its values, so `$1 is null` is decided when planned and the order's index (funcao_nome_ordem)
// still serves a page with no search.

/** Case-insensitive substring $1 of the name, or every function when $1 is null; strpos needs no escaping of % and _. */
const FILTRO = 'where ($1::text is null or strpos(lower(f.nome), lower($1::text)) > 0)';

/** Alphabetical as a Portuguese reader expects; the id breaks ties so pages never overlap. */
const ORDEM = 'order by f.nome collate "pt-BR-x-icu", f.id';

/** Active collaborators linked to the function (removed ones are tombstones, inactive ones not counted). */
const QUANTIDADE = `(select count(*)::int from colaborador c where c.funcao_id = f.id::text and c.ativo and not c.removido)`;

const COLUNAS = `f.id::text as id, f.nome, ${QUANTIDADE} as quantidade, f.criado_em, f.atualizado_em`;

const COLUNAS_DA_FUNCAO = {
  id: 'text',
  nome: 'text',
  quantidade: 'int4',
  criado_em: 'timestamptz',
  atualizado_em: 'timestamptz',
} as const;

/** How many functions search $1 finds. */
export const FUNCAO_TOTAL = prismaStatement<{ n: number }>({
  name: 'funcao_total',
  text: `select count(*)::int as n from funcao f ${FILTRO}`,
  parameters: ['text'],
  columns: { n: 'int4' },
});

/**
 * One page of search $1 ($2 rows after $3), counted after the page is cut: PostgreSQL would
 * otherwise compute the count of every row skipped by OFFSET too.
 */
export const FUNCAO_PAGINA = prismaStatement<FuncaoRow>({
  name: 'funcao_pagina',
  text: `select ${COLUNAS} from (select f.* from funcao f ${FILTRO} ${ORDEM} limit $2 offset $3) f ${ORDEM}`,
  parameters: ['text', 'int8', 'int8'],
  columns: COLUNAS_DA_FUNCAO,
});

/** One page of search $1's ids and names ($2 rows after $3). */
export const FUNCAO_RESUMOS = prismaStatement<{ id: string; nome: string }>({
  name: 'funcao_resumos',
  text: `select f.id::text as id, f.nome from funcao f ${FILTRO} ${ORDEM} limit $2 offset $3`,
  parameters: ['text', 'int8', 'int8'],
  columns: { id: 'text', nome: 'text' },
});

/** Every function search $1 finds. */
export const FUNCAO_TODAS = prismaStatement<FuncaoRow>({
  name: 'funcao_todas',
  text: `select ${COLUNAS} from funcao f ${FILTRO} ${ORDEM}`,
  parameters: ['text'],
  columns: COLUNAS_DA_FUNCAO,
});

/** Function $1. */
export const FUNCAO_BUSCAR = prismaStatement<FuncaoRow>({
  name: 'funcao_buscar',
  text: `select ${COLUNAS} from funcao f where f.id = $1::uuid`,
  parameters: ['uuid'],
  columns: COLUNAS_DA_FUNCAO,
});

/** Function $1's current name, its row locked until the transaction ends. */
export const FUNCAO_TRAVAR = prismaStatement<{ nome: string }>({
  name: 'funcao_travar',
  text: 'select nome from funcao where id = $1::uuid for update',
  parameters: ['uuid'],
  columns: { nome: 'text' },
});

/**
 * One outbox row per collaborator of function $1 (removed ones excepted), to exchange $2 with
 * routing key $3 at $4: the body glued together as JSON text from the fixed parts ($5, $6) and
 * each collaborator's fragment kept by the projection (colaborador.anuncio).
 */
export const FUNCAO_ANUNCIAR = prismaStatement({
  name: 'funcao_anunciar',
  text: `insert into outbox (id, exchange, routing_key, message_id, body, criado_em)
    select a.id, $2, $3, a.id::text,
      ('{"id":"' || a.id::text || '",' || $5::text || ',"entidade_id":' || to_json(a.termoauth_id)::text
        || ',"dados":{' || a.anuncio || ',' || $6::text)::json,
      $4
    from (select uuid_v7() as id, c.termoauth_id, c.anuncio
            from colaborador c where c.funcao_id = $1::uuid::text and not c.removido) a`,
  parameters: ['uuid', 'text', 'text', 'timestamptz', 'text', 'text'],
  columns: {},
});
