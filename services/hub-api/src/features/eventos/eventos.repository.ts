import type { PageRequest } from '@hub/http';
import { runOnPrisma } from '@hub/database';
import type { DbClient } from '../../db';
import { Prisma } from '@hub/hub-data';
import { FILTRO_EVENTOS_MAX } from './eventos.consultas';
import { EVENTO_TOTAL } from './resumo.sql';

/** An event as the lists show it: names joined, no dados. */
export interface LinhaDeEvento {
  id: string;
  tipo_de_evento_id: string;
  tipo_de_evento_nome: string;
  versao_do_esquema: number;
  aplicativo_publicador_id: string;
  aplicativo_publicador_nome: string;
  entidade_id: string;
  ocorrido_em: Date;
  recebido_em: Date;
  publicado_pelo_email: string | null;
}

export interface FiltroDeEventos {
  id?: string;
  tipo_de_evento_id?: string;
  aplicativo_publicador_id?: string;
  entidade_id?: string;
  desde?: Date;
  ate?: Date;
}

/** The rows of `ids` (a subquery ordered newest first) with their names, in the same order. */
export const comNomes = (ids: Prisma.Sql) => Prisma.sql`
  select e.id::text, e.tipo_de_evento_id::text, t.nome as tipo_de_evento_nome, e.versao_do_esquema,
         e.aplicativo_publicador_id::text, a.nome as aplicativo_publicador_nome, e.entidade_id,
         e.ocorrido_em, e.recebido_em, e.publicado_pelo_email
    from (${ids}) p
    join evento e on e.id = p.id
    join tipo_de_evento t on t.id = e.tipo_de_evento_id
    join aplicativo a on a.id = e.aplicativo_publicador_id
   order by p.recebido_em desc, p.id desc`;

function condicoes(filtro: FiltroDeEventos): Prisma.Sql {
  const partes: Prisma.Sql[] = [];
  if (filtro.id) partes.push(Prisma.sql`id = ${filtro.id}::uuid`);
  if (filtro.tipo_de_evento_id) partes.push(Prisma.sql`tipo_de_evento_id = ${filtro.tipo_de_evento_id}::uuid`);
  if (filtro.aplicativo_publicador_id)
    partes.push(Prisma.sql`aplicativo_publicador_id = ${filtro.aplicativo_publicador_id}::uuid`);
  if (filtro.entidade_id !== undefined) partes.push(Prisma.sql`entidade_id = ${filtro.entidade_id}`);
  if (filtro.desde) partes.push(Prisma.sql`recebido_em >= ${filtro.desde}`);
  if (filtro.ate) partes.push(Prisma.sql`recebido_em <= ${filtro.ate}`);
  return partes.length ? Prisma.sql`where ${Prisma.join(partes, ' and ')}` : Prisma.empty;
}

/**
 * A page, newest received first, identical to `order by recebido_em desc, id desc offset skip`, but
 * the offset is not walked from the newest event. resumo_por_hora.eventos_guardados holds the exact
 * number of stored events of each hour (triggers on evento, migration 005): a running sum over the
 * hours, newest first, finds the hour the offset lands in and how many events are newer than it;
 * the index scan of evento_recebido then starts at the end of that hour (keyset on recebido_em)
 * and skips only the rest of the offset inside it, at most one hour of events. One statement, so
 * the counts and the rows come from one snapshot. An offset past the last event finds no hour and
 * no rows. Only the page's ids are joined to the rows and names.
 */
export function sqlDaPagina({ pagina, tamanho }: PageRequest): Prisma.Sql {
  const skip = Math.min((pagina - 1) * tamanho, Number.MAX_SAFE_INTEGER);
  return comNomes(Prisma.sql`
    with horas as (
      select hora, sum(eventos_guardados) as n from resumo_por_hora group by hora having sum(eventos_guardados) > 0
    ), acumuladas as (
      select hora, n, sum(n) over (order by hora desc) - n as mais_novos from horas
    ), alvo as (
      select hora, mais_novos from acumuladas
       where mais_novos <= ${skip}::bigint and ${skip}::bigint < mais_novos + n
    )
    select id, recebido_em from evento
     where recebido_em < (select hora + interval '1 hour' from alvo)
     order by recebido_em desc, id desc
    offset ${skip}::bigint - (select mais_novos from alvo) limit ${tamanho}`);
}

/** Every match (at most FILTRO_EVENTOS_MAX), newest received first, through the filter's index. */
export const sqlDoFiltro = (filtro: FiltroDeEventos): Prisma.Sql =>
  comNomes(Prisma.sql`select id, recebido_em from evento ${condicoes(filtro)}
    order by recebido_em desc, id desc limit ${FILTRO_EVENTOS_MAX}`);

/** The panel's reads of events (contract §4.3); the SQL is exported for the benchmark's plans. */
export function eventosRepository(db: DbClient) {
  return {
    async listar(request: PageRequest, cliente: DbClient = db) {
      const [itens, contagem] = await Promise.all([
        cliente.$queryRaw<LinhaDeEvento[]>(sqlDaPagina(request)),
        runOnPrisma(cliente, EVENTO_TOTAL),
      ]);
      return { itens, total: contagem[0]?.total ?? 0 };
    },

    filtrar: (filtro: FiltroDeEventos, cliente: DbClient = db) =>
      cliente.$queryRaw<LinhaDeEvento[]>(sqlDoFiltro(filtro)),
  };
}
export type EventosRepository = ReturnType<typeof eventosRepository>;
