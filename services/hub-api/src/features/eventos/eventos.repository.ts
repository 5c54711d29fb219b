import type { PageRequest } from '@hub/http';
import { runOnPrisma } from '@hub/database';
import type { DbClient } from '../../db';
import { Prisma } from '@hub/hub-data';
import { FILTRO_EVENTOS_MAX } from './eventos.consultas';
import { COLUNAS_COM_NOMES, EVENTO_FILTRO, EVENTO_PAGINA, JUNCOES_DOS_NOMES } from './eventos.sql';
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

/** The rows of `ids` (a subquery ordered newest first) with their names, in the same order (tests' pages). */
export const comNomes = (ids: Prisma.Sql) => Prisma.sql`
  select ${Prisma.raw(COLUNAS_COM_NOMES)}
    from (${ids}) p
    ${Prisma.raw(JUNCOES_DOS_NOMES)}`;

/** EVENTO_PAGINA's values: the events skipped and the page's size. */
export function valoresDaPagina({ pagina, tamanho }: PageRequest): unknown[] {
  return [Math.min((pagina - 1) * tamanho, Number.MAX_SAFE_INTEGER), tamanho];
}

/** EVENTO_FILTRO's values: each filter, null when unset, and the most rows. */
export function valoresDoFiltro(f: FiltroDeEventos): unknown[] {
  return [
    f.id || null,
    f.tipo_de_evento_id || null,
    f.aplicativo_publicador_id || null,
    f.entidade_id ?? null,
    f.desde ?? null,
    f.ate ?? null,
    FILTRO_EVENTOS_MAX,
  ];
}

/** A page's statement and values, for the benchmarks' plans (bench/reads, bench/retention). */
export const sqlDaPagina = (request: PageRequest) => ({ text: EVENTO_PAGINA.text, values: valoresDaPagina(request) });

/** A filter's statement and values, for the benchmarks' plans. */
export const sqlDoFiltro = (f: FiltroDeEventos) => ({ text: EVENTO_FILTRO.text, values: valoresDoFiltro(f) });

/** The panel's reads of events (contract §4.3); the SQL is exported for the benchmark's plans. */
export function eventosRepository(db: DbClient) {
  return {
    async listar(request: PageRequest, cliente: DbClient = db) {
      const [itens, contagem] = await Promise.all([
        runOnPrisma(cliente, EVENTO_PAGINA, valoresDaPagina(request)),
        runOnPrisma(cliente, EVENTO_TOTAL),
      ]);
      return { itens, total: contagem[0]?.total ?? 0 };
    },

    filtrar: (filtro: FiltroDeEventos, cliente: DbClient = db) =>
      runOnPrisma(cliente, EVENTO_FILTRO, valoresDoFiltro(filtro)),
  };
}
export type EventosRepository = ReturnType<typeof eventosRepository>;
