import type { PageRequest } from '@hub/http';
import { Prisma, type SolicitacaoDeReprocessamento } from '@hub/hub-data';
import { runOnPrisma } from '@hub/database';
import type { DbClient, Tx } from '../../db';
import { iso } from '../../schemas';
import type { SituacaoDoReprocessamento, SolicitacaoDto } from './reprocessamento.schemas';
import { REPROCESSAMENTO_REIVINDICAR } from './reprocessamento.sql';

export const dtoDaSolicitacao = (s: SolicitacaoDeReprocessamento): SolicitacaoDto => ({
  id: s.id,
  situacao: s.situacao as SituacaoDoReprocessamento,
  entrega_ids: (s.entregaIds as string[] | null) ?? null,
  assinatura_id: s.assinaturaId,
  tipo_de_evento_id: s.tipoDeEventoId,
  desde: s.desde ? iso(s.desde) : null,
  ate: s.ate ? iso(s.ate) : null,
  quantidade_de_entregas: s.quantidadeDeEntregas,
  reprocessadas: s.reprocessadas,
  ignoradas: s.ignoradas,
  solicitada_pelo_email: s.solicitadaPeloEmail,
  criada_em: iso(s.criadaEm),
  atualizada_em: iso(s.atualizadaEm),
  iniciada_em: s.iniciadaEm ? iso(s.iniciadaEm) : null,
  concluida_em: s.concluidaEm ? iso(s.concluidaEm) : null,
});

/** What a request covers, as a filter of deliveries. */
export interface Alcance {
  entregaIds: string[] | null;
  assinaturaId: string | null;
  tipoDeEventoId: string | null;
  desde: Date | null;
  ate: Date | null;
  /** Only deliveries already in fila_de_erro at this instant: one that failed again after a new cycle is not taken twice. */
  ate_atualizada_em: Date;
}

/**
 * The deliveries a request covers: in fila_de_erro since before it was made, matching its ids or
 * filter. Found through entrega_nao_concluida (alias c, migration 018: the error queue's partial
 * indexes by subscription, type and subscriber live there), each checked in entrega (alias en).
 */
function condicoes(a: Alcance): Prisma.Sql {
  const partes = [
    Prisma.sql`c.fase = 'fila_de_erro'`,
    Prisma.sql`en.situacao = 'fila_de_erro'`,
    Prisma.sql`en.atualizada_em <= ${a.ate_atualizada_em}`,
  ];
  if (a.entregaIds) partes.push(Prisma.sql`c.entrega_id = any(${a.entregaIds}::uuid[])`);
  if (a.assinaturaId) partes.push(Prisma.sql`c.assinatura_id = ${a.assinaturaId}::uuid`);
  if (a.tipoDeEventoId) partes.push(Prisma.sql`c.tipo_de_evento_id = ${a.tipoDeEventoId}::uuid`);
  if (a.desde) partes.push(Prisma.sql`c.criada_em >= ${a.desde}`);
  if (a.ate) partes.push(Prisma.sql`c.criada_em <= ${a.ate}`);
  return Prisma.join(partes, ' and ');
}
const DO_ALCANCE = Prisma.sql`entrega_nao_concluida c join entrega en on en.id = c.entrega_id`;

export const alcanceDe = (s: SolicitacaoDeReprocessamento): Alcance => ({
  entregaIds: (s.entregaIds as string[] | null) ?? null,
  assinaturaId: s.assinaturaId,
  tipoDeEventoId: s.tipoDeEventoId,
  desde: s.desde,
  ate: s.ate,
  ate_atualizada_em: s.criadaEm,
});

/** One delivery of a batch, its row locked: whether its subscription still receives. */
export interface Candidata {
  id: string;
  criada_em: Date;
  assinatura_ativa: boolean;
}

const INICIO = { criadaEm: new Date('0001-01-01T00:00:00.000Z'), id: '00000000-0000-0000-0000-000000000000' };

export function reprocessamentoRepository(db: DbClient) {
  return {
    async contar(alcance: Alcance, cliente: DbClient = db): Promise<number> {
      const [linha] = await cliente.$queryRaw<[{ n: number }]>`
        select count(*)::int as n from ${DO_ALCANCE} where ${condicoes(alcance)}`;
      return linha.n;
    },

    criar: (data: Prisma.SolicitacaoDeReprocessamentoUncheckedCreateInput, cliente: DbClient = db) =>
      cliente.solicitacaoDeReprocessamento.create({ data }),

    async listar({ pagina, tamanho }: PageRequest) {
      const [itens, total] = await Promise.all([
        db.solicitacaoDeReprocessamento.findMany({
          orderBy: [{ criadaEm: 'desc' }, { id: 'desc' }],
          skip: Math.min((pagina - 1) * tamanho, Number.MAX_SAFE_INTEGER),
          take: tamanho,
        }),
        db.solicitacaoDeReprocessamento.count(),
      ]);
      return { itens, total };
    },

    buscar: (id: string) => db.solicitacaoDeReprocessamento.findUnique({ where: { id } }),

    /** Cancels a request still pendente; a batch holding its row is waited for, then it is em_andamento. */
    cancelar: (id: string, agora: Date) =>
      db.solicitacaoDeReprocessamento.updateMany({
        where: { id, situacao: 'pendente' },
        data: { situacao: 'cancelada', atualizadaEm: agora, concluidaEm: agora },
      }),

    /**
     * The oldest request not yet final whose row no other runner holds, locked until the batch
     * commits: two hub-api never work on one request at once, and either may go on with it later.
     */
    async reivindicar(tx: Tx): Promise<SolicitacaoDeReprocessamento | undefined> {
      const [linha] = await runOnPrisma(tx, REPROCESSAMENTO_REIVINDICAR);
      return linha ? await tx.solicitacaoDeReprocessamento.findUniqueOrThrow({ where: { id: linha.id } }) : undefined;
    },

    /** The next batch after the request's cursor, oldest first, their rows locked. */
    async candidatas(s: SolicitacaoDeReprocessamento, lote: number, tx: Tx): Promise<Candidata[]> {
      const cursor = { criadaEm: s.cursorCriadaEm ?? INICIO.criadaEm, id: s.cursorId ?? INICIO.id };
      return tx.$queryRaw<Candidata[]>`
        select en.id::text, en.criada_em, (a.ativa and a.excluida_em is null) as assinatura_ativa
          from ${DO_ALCANCE} join assinatura a on a.id = en.assinatura_id
         where ${condicoes(alcanceDe(s))} and (c.criada_em, c.entrega_id) > (${cursor.criadaEm}, ${cursor.id}::uuid)
         order by c.criada_em, c.entrega_id
         limit ${lote}
           for update of en`;
    },

    avancar: (id: string, data: Prisma.SolicitacaoDeReprocessamentoUpdateInput, tx: Tx) =>
      tx.solicitacaoDeReprocessamento.update({ where: { id }, data }),
  };
}
export type ReprocessamentoRepository = ReturnType<typeof reprocessamentoRepository>;
