import { prismaStatement, type Statement, statement } from '@hub/database';
import type { LinhaDeEvento } from '../eventos/eventos.repository';
import { COLUNAS_DO_EVENTO } from '../eventos/eventos.sql';
import { colunas, literal } from './colunas';
import type { Gravacao } from './gravacao';

// Publication's hot statements (docs/development.md, "Reaching the database"): the group write in
// its three shapes and the key's lookup, declared for SqlPool and checked by sql.test.ts.

/**
 * ONE statement for any number of publications: their Idempotency-Keys, events and deliveries, as
 * data-modifying CTEs over `unnest` arrays, answering the ids of the events it wrote. A statement is
 * atomic on its own (autocommit, or inside the caller's transaction), so no BEGIN/COMMIT round trips;
 * the triggers fire once for it: on evento, the hour's tallies in resumo_por_hora (eventos and
 * eventos_guardados, one row; migration 005), on entrega, the copies of entrega_nao_concluida
 * (migration 018). The foreign keys of entrega are checked at the end of the statement. The delivery
 * jobs are not written: they are published once the statement has committed (despacho.ts).
 *
 * It is a named prepared statement (SqlPool: one text, planned once per connection), so every
 * value is an array parameter, whatever the batch's size (dados: one JSON array, joined to the
 * events by position).
 *
 * An ordered subscription's deliveries (docs/decisions/ordered-delivery-per-entity.md) get their
 * sequencia here: the batch's deliveries are counted per (subscription, entity) first (an upsert
 * cannot touch one row twice in a statement), each counter row of sequencia_de_entidade is advanced
 * once, in key order (as liberar_seguintes locks them: no deadlock), and each delivery numbered from
 * it in the batch's order. The counter's row lock orders every writer of a chain, and its RETURNING
 * is the row as it is after any publication or release that held it first: a delivery whose
 * sequencia is the chain's `pronta` goes now, every later one waits (em_espera, its job not sent).
 * Besides the events written, the statement answers each ordered delivery's sequencia and whether
 * it waits. A batch with no ordered delivery goes by SQL_DA_GRAVACAO_SEM_ORDEM, without those steps.
 *
 * A keyed publication's event (with its deliveries) is written only when its key is
 * claimed: inserted, or taking the place of one older than 24 h (`on conflict … do update … where`
 * returns only those). A key held by another publication, committed or in flight, is not claimed:
 * the statement waits on the key's primary key until the other one commits, writes nothing of this
 * publication, and its caller answers with the first event.
 */
/**
 * The events' insert: their ids in parameter $id, the other columns from $p on (type, version,
 * publisher, entity, occurred, received, e-mail; dados as one JSON array at $p+7); `onde` filters them.
 */
const EVENTOS = (id: number, p: number, onde = '') => `
      insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                          ocorrido_em, recebido_em, publicado_pelo_email, dados)
      select e.id, e.tipo_de_evento_id, e.versao_do_esquema, e.aplicativo_publicador_id, e.entidade_id,
             e.ocorrido_em, e.recebido_em, e.publicado_pelo_email, d.dados
        from unnest($${id}::uuid[], $${p}::uuid[], $${p + 1}::int[], $${p + 2}::uuid[], $${p + 3}::text[],
                    $${p + 4}::timestamptz[], $${p + 5}::timestamptz[], $${p + 6}::text[]) with ordinality
             as e(id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                  ocorrido_em, recebido_em, publicado_pelo_email, n)
        join json_array_elements($${p + 7}::json) with ordinality as d(dados, n) using (n)
       ${onde}
      returning id`;

/** EVENTOS' parameters from $p on, their types as in its text. */
const PARAMETROS_DE_EVENTOS = [
  'uuid[]',
  'int4[]',
  'uuid[]',
  'text[]',
  'timestamptz[]',
  'timestamptz[]',
  'text[]',
  'json',
];

/** The keys claimed and the events written: the statement's start, with or without ordered deliveries. */
const CHAVES_E_EVENTOS = `
    with chaves as (
      insert into chave_de_idempotencia as c (escopo, chave, impressao, evento_id, criada_em)
      select * from unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::timestamptz[])
      on conflict (escopo, chave) do update
         set impressao = excluded.impressao, evento_id = excluded.evento_id, criada_em = excluded.criada_em
       where c.criada_em < excluded.criada_em - $6::bigint * interval '1 millisecond'
      returning c.evento_id
    ), aceitos as (
      select a.id from unnest($7::uuid[], $8::boolean[]) as a(id, com_chave)
       where not a.com_chave or a.id in (select evento_id from chaves)
    ), eventos as (${EVENTOS(7, 9, 'where e.id in (select id from aceitos)')}
    )`;

/**
 * The deliveries' insert, their columns from parameter $p on (ten arrays): of accepted events only
 * when `aceitos`; `numeradas` (when there is one) gives the ordered ones their place.
 */
const ENTREGAS = (numeradas: boolean, p = 17, aceitos = true) => `
      insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id, aplicativo_assinante_id,
                           tipo_de_evento_id, versao_do_esquema, url_de_destino, maximo_de_tentativas,
                           situacao, proxima_tentativa_em, criada_em, atualizada_em, sequencia, em_espera)
      select n.*, 'pendente', n.recebido, n.recebido, n.recebido,
             ${numeradas ? 'q.sequencia, coalesce(q.sequencia <> q.pronta, false)' : 'null, false'}
        from unnest($${p}::uuid[], $${p + 1}::uuid[], $${p + 2}::timestamptz[], $${p + 3}::text[], $${p + 4}::uuid[],
                    $${p + 5}::uuid[], $${p + 6}::uuid[], $${p + 7}::int[], $${p + 8}::text[], $${p + 9}::int[])
             as n(id, evento_id, recebido, entidade_id, assinatura_id, aplicativo_assinante_id, tipo_de_evento_id,
                  versao_do_esquema, url_de_destino, maximo_de_tentativas)
        ${numeradas ? 'left join numeradas q on q.id = n.id' : ''}
       ${aceitos ? 'where n.evento_id in (select id from aceitos)' : ''}`;

/** ENTREGAS' ten parameters from $p on, their types as in its text. */
const PARAMETROS_DE_ENTREGAS = [
  ...['uuid[]', 'uuid[]', 'timestamptz[]', 'text[]', 'uuid[]'],
  ...['uuid[]', 'uuid[]', 'int4[]', 'text[]', 'int4[]'],
];

/** SQL_DA_GRAVACAO's 27 parameters: the keys ($1–$6), the ids accepted ($7, $8), events, deliveries, the ordered ids. */
const PARAMETROS_DA_GRAVACAO = [
  ...['text[]', 'text[]', 'text[]', 'uuid[]', 'timestamptz[]', 'int8', 'uuid[]', 'bool[]'],
  ...PARAMETROS_DE_EVENTOS,
  ...PARAMETROS_DE_ENTREGAS,
  'uuid[]',
];

export const SQL_DA_GRAVACAO = `${CHAVES_E_EVENTOS}, ordenadas as (
      select o.id, o.assinatura_id, o.entidade_id,
             row_number() over (partition by o.assinatura_id, o.entidade_id order by o.n) as r
        from unnest($17::uuid[], $18::uuid[], $20::text[], $21::uuid[]) with ordinality
             as o(id, evento_id, entidade_id, assinatura_id, n)
       where o.id = any($27::uuid[]) and o.evento_id in (select id from aceitos)
    ), contagem as (
      select assinatura_id, entidade_id, count(*) as k from ordenadas group by assinatura_id, entidade_id
    ), contadores as (
      insert into sequencia_de_entidade as s (assinatura_id, entidade_id, ultima, pronta)
      select assinatura_id, entidade_id, k, 1 from contagem order by assinatura_id, entidade_id
      on conflict (assinatura_id, entidade_id) do update set ultima = s.ultima + excluded.ultima
      returning s.assinatura_id, s.entidade_id, s.ultima, s.pronta
    ), numeradas as (
      select o.id, c.ultima - g.k + o.r as sequencia, c.pronta
        from ordenadas o
        join contagem g on g.assinatura_id = o.assinatura_id and g.entidade_id = o.entidade_id
        join contadores c on c.assinatura_id = o.assinatura_id and c.entidade_id = o.entidade_id
    ), entregas as (${ENTREGAS(true)}
    )
    select id::text, null::text as sequencia, null::boolean as em_espera from eventos
    union all
    select id::text, sequencia::text, sequencia <> pronta from numeradas`;

/**
 * The same write for a batch with no ordered delivery (the usual one), its first 26 parameters: the
 * ordered steps, though they see no row then, still cost every statement the start of their upsert
 * on sequencia_de_entidade and of their joins (a tenth of the statement's CPU in small batches,
 * bench/delivery/postgres-work-per-delivery.ts). Its own prepared statement, so each text keeps its one name.
 */
export const SQL_DA_GRAVACAO_SEM_ORDEM = `${CHAVES_E_EVENTOS}, entregas as (${ENTREGAS(false)}
    )
    select id::text, null::text as sequencia, null::boolean as em_espera from eventos`;

/**
 * The most usual batch: no Idempotency-Key and no ordered delivery (issue 19, second pass). Every
 * event is written, so the statement has no key to claim and nothing to filter by it: the empty
 * upsert on chave_de_idempotencia, the `aceitos` list and the two semi-joins on it cost every
 * statement their start and their hashing though they change nothing. Its own prepared statement:
 * the same events and deliveries as SQL_DA_GRAVACAO_SEM_ORDEM with every key array empty.
 */
export const SQL_DA_GRAVACAO_SIMPLES = `
    with eventos as (${EVENTOS(1, 2)}
    ), entregas as (${ENTREGAS(false, 10, false)}
    )
    select id::text, null::text as sequencia, null::boolean as em_espera from eventos`;

/** SQL_DA_GRAVACAO_SEM_ORDEM's parameters ($1–$26); SQL_DA_GRAVACAO's are these and the ordered ids. */
const comChaves = (c: ReturnType<typeof colunas>) => [...c.chaves, c.eventoId, c.comChave, ...c.eventos, ...c.entregas];

/** The parameters of SQL_DA_GRAVACAO for a batch of publications: one array per column. */
export function valoresDaGravacao(lote: Gravacao[]): unknown[] {
  const c = colunas(lote);
  return [...comChaves(c), literal(c.enOrdenada)];
}

/** A row of the group write: an event it wrote (sequencia null), or an ordered delivery and its place. */
interface Gravado {
  id: string;
  sequencia: string | null;
  em_espera: boolean | null;
}

/** The group write's row, as its three statements give it. */
const COLUNAS_GRAVADAS = { id: 'text', sequencia: 'text', em_espera: 'bool' } as const;

/** The group write's three statements (SqlPool), their rows checked against the database by sql.test.ts. */
export const GRAVACOES = {
  ordenada: statement<Gravado>({
    name: 'publicacao_gravar',
    text: SQL_DA_GRAVACAO,
    parameters: PARAMETROS_DA_GRAVACAO,
    columns: COLUNAS_GRAVADAS,
  }),
  semOrdem: statement<Gravado>({
    name: 'publicacao_gravar_sem_ordem',
    text: SQL_DA_GRAVACAO_SEM_ORDEM,
    parameters: PARAMETROS_DA_GRAVACAO.slice(0, 26),
    columns: COLUNAS_GRAVADAS,
  }),
  simples: statement<Gravado>({
    name: 'publicacao_gravar_simples',
    text: SQL_DA_GRAVACAO_SIMPLES,
    parameters: ['uuid[]', ...PARAMETROS_DE_EVENTOS, ...PARAMETROS_DE_ENTREGAS],
    columns: COLUNAS_GRAVADAS,
  }),
};

/** The key's lookup of every keyed publication (`buscarChave`). */
export const BUSCAR_CHAVE = statement<ChaveGuardada>({
  name: 'publicacao_buscar_chave',
  text: `select impressao, evento_id as "eventoId", criada_em as "criadaEm"
    from chave_de_idempotencia where escopo = $1 and chave = $2`,
  parameters: ['text', 'text'],
  columns: { impressao: 'text', eventoId: 'uuid', criadaEm: 'timestamptz' },
});

/**
 * The statement that writes a batch, by what the batch holds: GRAVACOES.ordenada (SQL_DA_GRAVACAO)
 * when a delivery is ordered, .semOrdem (its first 26 parameters) when a publication has a key,
 * .simples otherwise. Each text keeps its one name (SqlPool).
 */
export function consultaDaGravacao(lote: Gravacao[]): {
  statement: Statement<Gravado>;
  nome: string;
  texto: string;
  valores: unknown[];
} {
  const c = colunas(lote);
  const [gravacao, valores] =
    c.enOrdenada.length > 0
      ? [GRAVACOES.ordenada, [...comChaves(c), literal(c.enOrdenada)]]
      : lote.some((g) => g.chave)
        ? [GRAVACOES.semOrdem, comChaves(c)]
        : [GRAVACOES.simples, [c.eventoId, ...c.eventos, ...c.entregas]];
  return { statement: gravacao, nome: gravacao.name, texto: gravacao.text, valores };
}

/** A key's record, as the lookup of a keyed publication reads it. */
export interface ChaveGuardada {
  impressao: string;
  eventoId: string;
  criadaEm: Date;
}

/** +1 refused in the summary's tally of hour $1, in slice $2 (`contarRecusa`; run on Prisma). */
export const PUBLICACAO_CONTAR_RECUSA = prismaStatement({
  name: 'publicacao_contar_recusa',
  text: `insert into resumo_por_hora (hora, fatia, recusados) values ($1, $2, 1)
        on conflict (hora, fatia) do update set recusados = resumo_por_hora.recusados + 1`,
  parameters: ['timestamptz', 'int4'],
  columns: {},
});

/** Event $1 with its names and dados as the stored text (`dados::text`: the json column verbatim). */
export const EVENTO_DETALHADO = prismaStatement<LinhaDeEvento & { dados: string }>({
  name: 'evento_detalhado',
  text: `select e.id::text, e.tipo_de_evento_id::text, t.nome as tipo_de_evento_nome, e.versao_do_esquema,
           e.aplicativo_publicador_id::text, a.nome as aplicativo_publicador_nome, e.entidade_id,
           e.ocorrido_em, e.recebido_em, e.publicado_pelo_email, e.dados::text as dados
    from evento e
    join tipo_de_evento t on t.id = e.tipo_de_evento_id
    join aplicativo a on a.id = e.aplicativo_publicador_id
    where e.id = $1::uuid`,
  parameters: ['uuid'],
  columns: { ...COLUNAS_DO_EVENTO, dados: 'text' },
});
