import type { SqlPool } from '@hub/database';
import { fatiaDoResumo, horaDoResumo, type Prisma } from '@hub/hub-data';
import type { DbClient } from '../../db';
import { compilarFiltroGuardado } from '../assinaturas/filtro';
import { type Gravacao, VALIDADE_DA_CHAVE_MS } from './gravacao';

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

/*
 * The parameters are PostgreSQL array literals written here, not JS arrays: node-postgres quotes
 * and escapes every element of an array parameter with two regular expressions (about 2 % of
 * hub-api's CPU per publication), where ids, numbers and ISO timestamps need no quoting at all
 * and text needs escaping only when it holds a quote or a backslash. PostgreSQL reads the same
 * values either way (array_in of the parameter's declared type).
 */

/** An array literal of values that need no quoting: uuids, integers, ISO timestamps, booleans (t/f). */
const literal = (valores: readonly (string | number)[]): string => `{${valores.join(',')}}`;

const ESCAPAR = /["\\]/;
/** An array literal of text (null: NULL), each element quoted, `"` and `\\` escaped. */
function literalDeTextos(valores: readonly (string | null)[]): string {
  let texto = '{';
  for (let i = 0; i < valores.length; i++) {
    const v = valores[i];
    if (i > 0) texto += ',';
    if (v === null || v === undefined) texto += 'NULL';
    else if (ESCAPAR.test(v)) texto += `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    else texto += `"${v}"`;
  }
  return `${texto}}`;
}

/** One array per column of the batch (in the statements' order), each ISO timestamp written once per event. */
function colunas(lote: Gravacao[]) {
  const n = lote.length;
  const eventoId: string[] = new Array(n);
  const tipo: string[] = new Array(n);
  const versao: number[] = new Array(n);
  const publicador: string[] = new Array(n);
  const entidade: string[] = new Array(n);
  const ocorrido: string[] = new Array(n);
  const recebido: string[] = new Array(n);
  const email: (string | null)[] = new Array(n);
  const dados: string[] = new Array(n);
  const comChave: string[] = new Array(n);
  const chEscopo: string[] = [];
  const chChave: string[] = [];
  const chImpressao: string[] = [];
  const chEvento: string[] = [];
  const chCriada: string[] = [];
  const enId: string[] = [];
  const enEvento: string[] = [];
  const enRecebido: string[] = [];
  const enEntidade: string[] = [];
  const enAssinatura: string[] = [];
  const enAssinante: string[] = [];
  const enTipo: string[] = [];
  const enVersao: number[] = [];
  const enUrl: string[] = [];
  const enMaximo: number[] = [];
  const enOrdenada: string[] = [];
  for (let i = 0; i < n; i++) {
    const g = lote[i]!;
    const e = g.evento;
    const recebidoEm = e.recebidoEm.toISOString();
    eventoId[i] = e.id;
    tipo[i] = e.tipoDeEventoId;
    versao[i] = e.versaoDoEsquema;
    publicador[i] = e.aplicativoPublicadorId;
    entidade[i] = e.entidadeId;
    ocorrido[i] = e.ocorridoEm === e.recebidoEm ? recebidoEm : e.ocorridoEm.toISOString();
    recebido[i] = recebidoEm;
    email[i] = e.publicadoPeloEmail;
    dados[i] = e.dadosTexto;
    comChave[i] = g.chave ? 't' : 'f';
    if (g.chave) {
      chEscopo.push(g.chave.escopo);
      chChave.push(g.chave.chave);
      chImpressao.push(g.chave.impressao);
      chEvento.push(e.id);
      chCriada.push(recebidoEm);
    }
    for (const en of g.entregas) {
      enId.push(en.id);
      enEvento.push(en.eventoId);
      enRecebido.push(en.eventoRecebidoEm === e.recebidoEm ? recebidoEm : en.eventoRecebidoEm.toISOString());
      enEntidade.push(en.entidadeId);
      enAssinatura.push(en.assinaturaId);
      enAssinante.push(en.aplicativoAssinanteId);
      enTipo.push(en.tipoDeEventoId);
      enVersao.push(en.versaoDoEsquema);
      enUrl.push(en.urlDeDestino);
      enMaximo.push(en.maximoDeTentativas);
      if (en.ordenada) enOrdenada.push(en.id);
    }
  }
  const chaves = [
    literalDeTextos(chEscopo),
    literalDeTextos(chChave),
    literalDeTextos(chImpressao),
    literal(chEvento),
    literal(chCriada),
    VALIDADE_DA_CHAVE_MS,
  ];
  const eventos = [
    literal(tipo),
    literal(versao),
    literal(publicador),
    literalDeTextos(entidade),
    literal(ocorrido),
    literal(recebido),
    literalDeTextos(email),
    // One JSON array of the batch's dados, spliced as written: as a json[] each ~1 KiB text was
    // escaped into an array literal by the driver (its largest cost per event) and parsed back.
    `[${dados.join(',')}]`,
  ];
  const entregas = [
    literal(enId),
    literal(enEvento),
    literal(enRecebido),
    literalDeTextos(enEntidade),
    literal(enAssinatura),
    literal(enAssinante),
    literal(enTipo),
    literal(enVersao),
    literalDeTextos(enUrl),
    literal(enMaximo),
  ];
  return { eventoId: literal(eventoId), comChave: literal(comChave), chaves, eventos, entregas, enOrdenada };
}

/** SQL_DA_GRAVACAO_SEM_ORDEM's parameters ($1–$26); SQL_DA_GRAVACAO's are these and the ordered ids. */
const comChaves = (c: ReturnType<typeof colunas>) => [...c.chaves, c.eventoId, c.comChave, ...c.eventos, ...c.entregas];

/** The parameters of SQL_DA_GRAVACAO for a batch of publications: one array per column. */
export function valoresDaGravacao(lote: Gravacao[]): unknown[] {
  const c = colunas(lote);
  return [...comChaves(c), literal(c.enOrdenada)];
}

/**
 * The statement that writes a batch, by what the batch holds: SQL_DA_GRAVACAO when a delivery is
 * ordered, SQL_DA_GRAVACAO_SEM_ORDEM (its first 26 parameters) when a publication has a key,
 * SQL_DA_GRAVACAO_SIMPLES otherwise. Each text keeps its one name (SqlPool).
 */
export function consultaDaGravacao(lote: Gravacao[]): { nome: string; texto: string; valores: unknown[] } {
  const c = colunas(lote);
  if (c.enOrdenada.length > 0)
    return {
      nome: 'publicacao_gravar',
      texto: SQL_DA_GRAVACAO,
      valores: [...comChaves(c), literal(c.enOrdenada)],
    };
  if (lote.some((g) => g.chave))
    return { nome: 'publicacao_gravar_sem_ordem', texto: SQL_DA_GRAVACAO_SEM_ORDEM, valores: comChaves(c) };
  return {
    nome: 'publicacao_gravar_simples',
    texto: SQL_DA_GRAVACAO_SIMPLES,
    valores: [c.eventoId, ...c.eventos, ...c.entregas],
  };
}

/** What SQL_DA_GRAVACAO wrote: the events, and the place of each ordered delivery (by delivery id). */
export interface Escritos {
  eventos: Set<string>;
  ordenadas: Map<string, { sequencia: number; emEspera: boolean }>;
}

export interface ChaveGuardada {
  impressao: string;
  eventoId: string;
  criadaEm: Date;
}

/**
 * Publication reaches the database through Prisma (the typed client; `$queryRaw` only where dados
 * must stay the stored text, detalhe.repository.ts), with ONE exception: the group write
 * (`gravar`), the key's lookup (`buscarChave`) and the outbox insert of the jobs the broker did not
 * confirm (despacho.ts) go through `SqlPool` as named prepared statements. Those run for every
 * accepted event (with a key, for the lookup); Prisma sends its raw queries unnamed, parsed and
 * planned on every call, and planning those CTEs cost as much as running them (docs/benchmarks.md,
 * "Publication: where the time goes"); and SqlPool's statements fail once unanswered for
 * ESPERA_MAXIMA_MS (10 s), where Prisma's wait up to ESPERA_PRISMA_MS (30 s). Everything else runs
 * rarely (refusals, a key's replay, cache misses) and keeps Prisma's types.
 *
 * Every Prisma function takes the client or a transaction (`cliente`, the base client when absent).
 */
export function publicacaoRepository(db: DbClient, sql: SqlPool) {
  return {
    /**
     * Writes a batch of publications in one statement (SQL_DA_GRAVACAO): the ids of the events it
     * wrote, and each ordered delivery's sequencia and whether it waits for an earlier one.
     */
    async gravar(lote: Gravacao[]): Promise<Escritos> {
      const { nome, texto, valores } = consultaDaGravacao(lote);
      const linhas = await sql.consultar<{ id: string; sequencia: string | null; em_espera: boolean | null }>(
        nome,
        texto,
        valores,
      );
      const escritos: Escritos = { eventos: new Set(), ordenadas: new Map() };
      for (const l of linhas)
        if (l.sequencia === null) escritos.eventos.add(l.id);
        else escritos.ordenadas.set(l.id, { sequencia: Number(l.sequencia), emEspera: l.em_espera === true });
      return escritos;
    },

    /**
     * The subscriptions that may receive a new event of this type and version, each with its
     * content filter compiled (null: every event). Compiled here, once per read: the registry's
     * cache (registro-em-cache.ts) keeps what this answers, so publication never parses a filter,
     * and a write of a subscription (whose NOTIFY drops that cache) is read and compiled again.
     */
    async assinaturasAtivas(tipoDeEventoId: string, versaoDoEsquema: number, cliente: DbClient = db) {
      const linhas = await cliente.assinatura.findMany({
        where: { tipoDeEventoId, versaoDoEsquema, ativa: true, excluidaEm: null },
        select: {
          id: true,
          aplicativoAssinanteId: true,
          urlDeDestino: true,
          maximoDeTentativas: true,
          filtro: true,
          entregaOrdenada: true,
          aplicativoAssinante: { select: { nome: true } },
        },
        orderBy: { id: 'asc' },
      });
      return linhas.map(({ filtro, ...a }) => ({ ...a, filtro: compilarFiltroGuardado(filtro) }));
    },

    /** +1 refused in the summary's tally of the hour; a random slice, so concurrent writers rarely meet. */
    async contarRecusa(instante: Date, cliente: DbClient = db): Promise<void> {
      await cliente.$executeRaw`
        insert into resumo_por_hora (hora, fatia, recusados) values (${horaDoResumo(instante)}, ${fatiaDoResumo()}, 1)
        on conflict (hora, fatia) do update set recusados = resumo_por_hora.recusados + 1`;
    },

    /**
     * The key's record, read first by every publication that carries one: through `SqlPool`, as
     * the group write, so that a database that hangs fails it within the same time (ESPERA_MAXIMA_MS)
     * instead of holding the publication for ever (Prisma's queries have no such limit).
     */
    buscarChave: async (escopo: string, chave: string): Promise<ChaveGuardada | null> => {
      const [guardada] = await sql.consultar<ChaveGuardada>(
        'publicacao_buscar_chave',
        `select impressao, evento_id as "eventoId", criada_em as "criadaEm"
           from chave_de_idempotencia where escopo = $1 and chave = $2`,
        [escopo, chave],
      );
      return guardada ?? null;
    },

    inserirRecusado: (data: Prisma.EventoRecusadoUncheckedCreateInput, cliente: DbClient = db) =>
      cliente.eventoRecusado.create({ data, select: { id: true } }),
  };
}
export type PublicacaoRepository = ReturnType<typeof publicacaoRepository>;
