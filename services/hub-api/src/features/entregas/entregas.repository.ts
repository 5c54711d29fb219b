import type { PageRequest } from '@hub/http';
import { runOnPrisma } from '@hub/database';
import { Prisma } from '@hub/hub-data';
import type { DbClient, Tx } from '../../db';
import { iso } from '../../schemas';
import { type EntregaDto, type Situacao, SITUACOES_NA_FILA } from '../eventos/eventos.schemas';
import { tentativaDto } from '../tentativas/tentativas.service';
import type { TentativaDto } from '../tentativas/tentativas.schemas';
import { COLUNAS_COM_NOMES, ENTREGA_BUSCAR, ENTREGA_TRAVAR_PARA_REENVIO, JUNCOES_DOS_NOMES } from './entregas.sql';
import { FILTRO_ENTREGAS_MAX, type FiltroDeEntregas, filtrosDeEntrega } from './entregas.schemas';

export interface LinhaDeEntrega {
  id: string;
  evento_id: string;
  evento_recebido_em: Date;
  entidade_id: string;
  assinatura_id: string;
  aplicativo_assinante_id: string;
  aplicativo_assinante_nome: string;
  tipo_de_evento_nome: string;
  versao_do_esquema: number;
  url_de_destino: string;
  situacao: Situacao;
  quantidade_de_tentativas: number;
  tentativas_no_ciclo_atual: number;
  maximo_de_tentativas: number;
  proxima_tentativa_em: Date;
  entregue_em: Date | null;
  ultimo_erro: string | null;
  criada_em: Date;
  atualizada_em: Date;
  sequencia: number | null;
}

const dto = (l: LinhaDeEntrega): EntregaDto => ({
  ...l,
  evento_recebido_em: iso(l.evento_recebido_em),
  proxima_tentativa_em: iso(l.proxima_tentativa_em),
  entregue_em: l.entregue_em ? iso(l.entregue_em) : null,
  criada_em: iso(l.criada_em),
  atualizada_em: iso(l.atualizada_em),
});

/** The rows of `ids` (a subquery of id and criada_em) with their names, newest first. */
const comNomes = (ids: Prisma.Sql) => Prisma.sql`
  select ${Prisma.raw(COLUNAS_COM_NOMES)}
    from (${ids}) p
    ${Prisma.raw(JUNCOES_DOS_NOMES)}
   order by p.criada_em desc, p.id desc`;

/**
 * Where a filter's deliveries are read, as (id, criada_em) under a FROM and a WHERE. Every state but
 * concluida is found in entrega_nao_concluida (migration 018: the deliveries not concluded, with copies
 * of the columns the filters name), by its fase: the queue (pendente, em_andamento and
 * aguardando_nova_tentativa share one, so each row's own situacao is checked in entrega), the error
 * queue or cancelada. One event's deliveries (a few) and concluida (the bulk, met at once in the list's
 * order) are read from entrega itself.
 */
function origem(f: FiltroDeEntregas): { de: Prisma.Sql; onde: Prisma.Sql; id: Prisma.Sql; criada: Prisma.Sql } {
  const partes: Prisma.Sql[] = [];
  if (f.situacao && f.situacao !== 'concluida' && !f.evento_id) {
    const fila = SITUACOES_NA_FILA.includes(f.situacao);
    // A literal (one of three known words), so that the planner matches the partial indexes of a fase.
    partes.push(Prisma.sql`c.fase = ${Prisma.raw(`'${fila ? 'fila' : f.situacao}'`)}`);
    if (fila) partes.push(Prisma.sql`e.situacao = ${f.situacao}`);
    if (f.assinatura_id) partes.push(Prisma.sql`c.assinatura_id = ${f.assinatura_id}::uuid`);
    if (f.aplicativo_assinante_id)
      partes.push(Prisma.sql`c.aplicativo_assinante_id = ${f.aplicativo_assinante_id}::uuid`);
    if (f.tipo_de_evento_id) partes.push(Prisma.sql`c.tipo_de_evento_id = ${f.tipo_de_evento_id}::uuid`);
    if (f.desde) partes.push(Prisma.sql`c.criada_em >= ${f.desde}`);
    if (f.ate) partes.push(Prisma.sql`c.criada_em <= ${f.ate}`);
    return {
      de: fila
        ? Prisma.sql`entrega_nao_concluida c join entrega e on e.id = c.entrega_id`
        : Prisma.sql`entrega_nao_concluida c`,
      onde: Prisma.sql`where ${Prisma.join(partes, ' and ')}`,
      id: Prisma.sql`c.entrega_id`,
      criada: Prisma.sql`c.criada_em`,
    };
  }
  if (f.situacao) partes.push(Prisma.sql`situacao = ${f.situacao}`);
  if (f.assinatura_id) partes.push(Prisma.sql`assinatura_id = ${f.assinatura_id}::uuid`);
  if (f.evento_id) partes.push(Prisma.sql`evento_id = ${f.evento_id}::uuid`);
  if (f.aplicativo_assinante_id) partes.push(Prisma.sql`aplicativo_assinante_id = ${f.aplicativo_assinante_id}::uuid`);
  if (f.tipo_de_evento_id) partes.push(Prisma.sql`tipo_de_evento_id = ${f.tipo_de_evento_id}::uuid`);
  if (f.desde) partes.push(Prisma.sql`criada_em >= ${f.desde}`);
  if (f.ate) partes.push(Prisma.sql`criada_em <= ${f.ate}`);
  return {
    de: Prisma.sql`entrega`,
    onde: partes.length ? Prisma.sql`where ${Prisma.join(partes, ' and ')}` : Prisma.empty,
    id: Prisma.sql`id`,
    criada: Prisma.sql`criada_em`,
  };
}

/** The filter's (id, criada_em), newest first, from `skip` on, at most `limite`. */
function emOrdem(f: FiltroDeEntregas, skip: number, limite: number): Prisma.Sql {
  const o = origem(f);
  return Prisma.sql`select ${o.id} as id, ${o.criada} as criada_em from ${o.de} ${o.onde}
    order by ${o.criada} desc, ${o.id} desc offset ${skip} limit ${limite}`;
}

/**
 * A page, newest first. The skipped rows are walked in an index of the filter (entrega_criada,
 * entrega_assinatura…, entrega_nao_concluida_fase…, an index-only scan where it can) and only the
 * page's ids are joined.
 */
export function sqlDaPagina(f: FiltroDeEntregas, { pagina, tamanho }: PageRequest): Prisma.Sql {
  return comNomes(emOrdem(f, Math.min((pagina - 1) * tamanho, Number.MAX_SAFE_INTEGER), tamanho));
}

/**
 * total of GET /entrega without a filter: every stored delivery, the sum of the hourly counts the
 * triggers on entrega keep exact (resumo_por_hora.entregas_guardadas, migration 023; a few hundred
 * small rows, where count(*) of entrega walked every delivery: 276 ms at p99 at 3,000,000). A
 * filter's total is still the count(*) of its matches.
 */
export const SQL_TOTAL = Prisma.sql`select coalesce(sum(entregas_guardadas), 0)::int as total from resumo_por_hora`;

/**
 * No filter set (every field of filtrosDeEntrega undefined): the panel's whole list. A subscribing
 * application's list (/entregas) always has its aplicativo_assinante_id, so it is always counted.
 */
const semFiltro = (f: FiltroDeEntregas) =>
  Object.keys(filtrosDeEntrega).every((campo) => f[campo as keyof FiltroDeEntregas] === undefined);

export const sqlDoTotal = (f: FiltroDeEntregas) => {
  if (semFiltro(f)) return SQL_TOTAL;
  const o = origem(f);
  return Prisma.sql`select count(*)::int as total from ${o.de} ${o.onde}`;
};
export const sqlDoFiltro = (f: FiltroDeEntregas) => comNomes(emOrdem(f, 0, FILTRO_ENTREGAS_MAX));

/**
 * Whose deliveries a read or a resend may reach: all of them (the panel), or one subscribing
 * application's (its own routes, /entregas): another's is then not found.
 */
export interface EscopoDeEntregas {
  aplicativo_assinante_id?: string;
}

/** What resending needs to know of a delivery, its row locked until the transaction ends. */
export interface EntregaParaReenvio {
  situacao: Situacao;
  assinatura_ativa: boolean;
}

/** The deliveries of the panel (architecture §4, Entrega); the SQL is exported for the benchmark's plans. */
export function entregasRepository(db: DbClient) {
  return {
    async listar(f: FiltroDeEntregas, request: PageRequest) {
      const [itens, contagem] = await Promise.all([
        db.$queryRaw<LinhaDeEntrega[]>(sqlDaPagina(f, request)),
        db.$queryRaw<[{ total: number }]>(sqlDoTotal(f)),
      ]);
      return { itens: itens.map(dto), total: contagem[0].total };
    },

    filtrar: async (f: FiltroDeEntregas) => (await db.$queryRaw<LinhaDeEntrega[]>(sqlDoFiltro(f))).map(dto),

    async buscar(id: string, escopo: EscopoDeEntregas = {}): Promise<EntregaDto | undefined> {
      const [linha] = await runOnPrisma(db, ENTREGA_BUSCAR, [id, escopo.aplicativo_assinante_id ?? null]);
      return linha && dto(linha);
    },

    async tentativas(entregaId: string): Promise<TentativaDto[]> {
      const linhas = await db.tentativa.findMany({ where: { entregaId }, orderBy: { numero: 'asc' } });
      return linhas.map(tentativaDto);
    },

    /** Locks the delivery's row (a concurrent resend or worker update waits) and reads its subscription. */
    async travarParaReenvio(
      id: string,
      tx: Tx,
      escopo: EscopoDeEntregas = {},
    ): Promise<EntregaParaReenvio | undefined> {
      const [linha] = await runOnPrisma(tx, ENTREGA_TRAVAR_PARA_REENVIO, [id, escopo.aplicativo_assinante_id ?? null]);
      return linha;
    },
  };
}
export type EntregasRepository = ReturnType<typeof entregasRepository>;
