import type { PageRequest } from '@hub/http';
import type { Prisma, SolicitacaoDeReprocessamento } from '@hub/hub-data';
import { runOnPrisma } from '@hub/database';
import type { DbClient, Tx } from '../../db';
import { iso } from '../../schemas';
import type { SituacaoDoReprocessamento, SolicitacaoDto } from './reprocessamento.schemas';
import { REPROCESSAMENTO_CANDIDATAS, REPROCESSAMENTO_CONTAR, REPROCESSAMENTO_REIVINDICAR } from './reprocessamento.sql';

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

/** A request's reach as REPROCESSAMENTO_CONTAR's and _CANDIDATAS's first six values (null: no such filter). */
const valoresDoAlcance = (a: Alcance) => [
  a.ate_atualizada_em,
  a.entregaIds,
  a.assinaturaId,
  a.tipoDeEventoId,
  a.desde,
  a.ate,
];

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
      const [linha] = await runOnPrisma(cliente, REPROCESSAMENTO_CONTAR, valoresDoAlcance(alcance));
      return linha?.n ?? 0;
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
      return runOnPrisma(tx, REPROCESSAMENTO_CANDIDATAS, [
        ...valoresDoAlcance(alcanceDe(s)),
        ...[cursor.criadaEm, cursor.id, lote],
      ]);
    },

    avancar: (id: string, data: Prisma.SolicitacaoDeReprocessamentoUpdateInput, tx: Tx) =>
      tx.solicitacaoDeReprocessamento.update({ where: { id }, data }),
  };
}
export type ReprocessamentoRepository = ReturnType<typeof reprocessamentoRepository>;
