import type { PageRequest } from '@hub/http';
import { Prisma, type Tentativa } from '@hub/hub-data';
import type { DbClient } from '../../db';
import { FILTRO_EVENTOS_MAX } from '../eventos/eventos.consultas';
import type { FiltroDeTentativas } from './tentativas.schemas';

/** The rows of `ids` (a subquery of id and iniciada_em), newest started first, named as Prisma's model. */
const comColunas = (ids: Prisma.Sql) => Prisma.sql`
  select t.id::text, t.entrega_id::text as "entregaId", t.numero, t.iniciada_em as "iniciadaEm",
         t.duracao_ms as "duracaoMs", t.status_http as "statusHttp", t.sucesso, t.resposta, t.erro, t.cabecalhos
    from (${ids}) p
    join tentativa t on t.id = p.id
   order by p.iniciada_em desc, p.id desc`;

/**
 * The filter as a WHERE on tentativa. Each filter has an index that leads with it and then the list's
 * order (tentativa_sucesso, tentativa_status: migration 007; tentativa_assinatura: migration 026;
 * tentativa_iniciada for desde and ate); one delivery's attempts (a few) come by
 * tentativa_numero_unico. A subscription's attempts carry it (tentativa.assinatura_id, a copy of their
 * delivery's): with desde/ate its index's range is the subscription's attempts of that period; sucesso
 * and status_http are included in it, so with either the count stays index-only and the page tests
 * them in the index, walking it in the list's order.
 */
function condicoes(f: FiltroDeTentativas): Prisma.Sql {
  const partes: Prisma.Sql[] = [];
  if (f.entrega_id) partes.push(Prisma.sql`entrega_id = ${f.entrega_id}::uuid`);
  if (f.assinatura_id) partes.push(Prisma.sql`assinatura_id = ${f.assinatura_id}::uuid`);
  if (f.sucesso !== undefined) partes.push(Prisma.sql`sucesso = ${f.sucesso}`);
  if (f.status_http !== undefined) partes.push(Prisma.sql`status_http = ${f.status_http}::int`);
  if (f.desde) partes.push(Prisma.sql`iniciada_em >= ${f.desde}`);
  if (f.ate) partes.push(Prisma.sql`iniciada_em <= ${f.ate}`);
  return partes.length ? Prisma.sql`where ${Prisma.join(partes, ' and ')}` : Prisma.empty;
}

/** Which filters are set: none, sucesso alone, or others (counted). */
const definidos = (f: FiltroDeTentativas) =>
  (Object.keys(f) as (keyof FiltroDeTentativas)[]).filter((campo) => f[campo] !== undefined);

/**
 * What resumo_por_hora counts of the filter, per hour (migration 024): every stored attempt, or those
 * with the sucesso given. Undefined for any other filter.
 */
function contagemPorHora(f: FiltroDeTentativas): Prisma.Sql | undefined {
  const campos = definidos(f);
  if (campos.length === 0) return Prisma.sql`tentativas_guardadas`;
  if (campos.length === 1 && campos[0] === 'sucesso')
    return f.sucesso
      ? Prisma.sql`tentativas_com_sucesso_guardadas`
      : Prisma.sql`(tentativas_guardadas - tentativas_com_sucesso_guardadas)`;
  return undefined;
}

/**
 * A page, newest started first, identical to `order by iniciada_em desc, id desc offset skip`. The
 * whole list and sucesso alone seek by hour as GET /evento's pages do (eventos.repository's
 * sqlDaPagina): a running sum of the hourly counts of resumo_por_hora, newest first, finds the hour
 * the offset lands in and how many attempts are newer; the scan of the filter's index starts at the
 * end of that hour and skips only the rest of the offset, at most one hour of attempts. One
 * statement, so counts and rows share a snapshot. Other filters walk their offset in their index.
 * Only the page's ids are joined to the rows.
 */
export function sqlDaPagina(f: FiltroDeTentativas, { pagina, tamanho }: PageRequest): Prisma.Sql {
  const skip = Math.min((pagina - 1) * tamanho, Number.MAX_SAFE_INTEGER);
  const contagem = contagemPorHora(f);
  if (!contagem)
    return comColunas(Prisma.sql`select id, iniciada_em from tentativa ${condicoes(f)}
      order by iniciada_em desc, id desc offset ${skip}::bigint limit ${tamanho}`);
  const fim = Prisma.sql`iniciada_em < (select hora + interval '1 hour' from alvo)`;
  return comColunas(Prisma.sql`
    with horas as (
      select hora, sum(${contagem}) as n from resumo_por_hora group by hora having sum(${contagem}) > 0
    ), acumuladas as (
      select hora, n, sum(n) over (order by hora desc) - n as mais_novas from horas
    ), alvo as (
      select hora, mais_novas from acumuladas
       where mais_novas <= ${skip}::bigint and ${skip}::bigint < mais_novas + n
    )
    select id, iniciada_em from tentativa
     where ${f.sucesso === undefined ? fim : Prisma.sql`sucesso = ${f.sucesso} and ${fim}`}
     order by iniciada_em desc, id desc
    offset ${skip}::bigint - (select mais_novas from alvo) limit ${tamanho}`);
}

/**
 * total of GET /tentativa: without a filter, every stored attempt, and with sucesso alone those that
 * succeeded or failed, from the hourly counts the triggers on tentativa keep exact
 * (resumo_por_hora.tentativas_guardadas and tentativas_com_sucesso_guardadas, migration 024: a few
 * hundred small rows, where count(*) walked millions of attempts). Any other filter's total is the
 * count(*) of its matches.
 */
export function sqlDoTotal(f: FiltroDeTentativas): Prisma.Sql {
  const contagem = contagemPorHora(f);
  return contagem
    ? Prisma.sql`select coalesce(sum(${contagem}), 0)::int as total from resumo_por_hora`
    : Prisma.sql`select count(*)::int as total from tentativa ${condicoes(f)}`;
}

/** Every match (at most FILTRO_EVENTOS_MAX), newest started first, through the filter's index. */
export const sqlDoFiltro = (f: FiltroDeTentativas): Prisma.Sql =>
  comColunas(Prisma.sql`select id, iniciada_em from tentativa ${condicoes(f)}
    order by iniciada_em desc, id desc limit ${FILTRO_EVENTOS_MAX}`);

/** Attempts of deliveries, newest started first; the SQL is exported for the benchmark's plans. */
export function tentativasRepository(db: DbClient) {
  return {
    async listar(filtro: FiltroDeTentativas, page: PageRequest) {
      const [itens, contagem] = await Promise.all([
        db.$queryRaw<Tentativa[]>(sqlDaPagina(filtro, page)),
        db.$queryRaw<[{ total: number }]>(sqlDoTotal(filtro)),
      ]);
      return { itens, total: contagem[0].total };
    },
    filtrar: (filtro: FiltroDeTentativas) => db.$queryRaw<Tentativa[]>(sqlDoFiltro(filtro)),
    buscar: (id: string) => db.tentativa.findUnique({ where: { id } }),
  };
}
export type TentativasRepository = ReturnType<typeof tentativasRepository>;
export type TentativaLinha = NonNullable<Awaited<ReturnType<TentativasRepository['buscar']>>>;
