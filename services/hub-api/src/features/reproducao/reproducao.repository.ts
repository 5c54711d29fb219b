import type { PageRequest } from '@hub/http';
import type { Prisma, Reproducao } from '@hub/hub-data';
import { runOnPrisma } from '@hub/database';
import type { DbClient } from '../../db';
import { iso } from '../../schemas';
import { REPRODUCAO_CONTAR_EVENTOS } from './lote.sql';
import type { ReproducaoDto, SituacaoDaReproducao } from './reproducao.schemas';

export const dtoDaReproducao = (r: Reproducao): ReproducaoDto => ({
  id: r.id,
  assinatura_id: r.assinaturaId,
  desde: iso(r.desde),
  ate: iso(r.ate),
  incluir_entregues: r.incluirEntregues,
  situacao: r.situacao as SituacaoDaReproducao,
  quantidade_de_eventos: r.quantidadeDeEventos,
  criadas: r.criadas,
  reenviadas: r.reenviadas,
  ignoradas: r.ignoradas,
  solicitada_por: r.solicitadaPor,
  criada_em: iso(r.criadaEm),
  concluida_em: r.concluidaEm ? iso(r.concluidaEm) : null,
});

/** What a replay is asked for: a subscription's type and version, and a range of receipt. */
export interface AlcanceDaReproducao {
  tipoDeEventoId: string;
  versaoDoEsquema: number;
  desde: Date;
  ate: Date;
}

/** The subscription as asking a replay needs it (deleted ones too: they are refused, not unknown). */
export interface AssinaturaDaReproducao {
  id: string;
  aplicativoAssinanteId: string;
  tipoDeEventoId: string;
  versaoDoEsquema: number;
  ativa: boolean;
  excluidaEm: Date | null;
}

export function reproducaoRepository(db: DbClient) {
  return {
    assinatura: (id: string, cliente: DbClient = db): Promise<AssinaturaDaReproducao | null> =>
      cliente.assinatura.findUnique({
        where: { id },
        select: {
          id: true,
          aplicativoAssinanteId: true,
          tipoDeEventoId: true,
          versaoDoEsquema: true,
          ativa: true,
          excluidaEm: true,
        },
      }),

    /**
     * The stored events of the range, counted up to `limite` + 1 at most: enough to tell a replay over
     * the limit without counting all of a large one (evento_tipo walks the type's events by receipt).
     */
    async contarEventos(a: AlcanceDaReproducao, limite: number, cliente: DbClient = db): Promise<number> {
      const [linha] = await runOnPrisma(cliente, REPRODUCAO_CONTAR_EVENTOS, [
        a.tipoDeEventoId,
        a.versaoDoEsquema,
        a.desde,
        a.ate,
        limite + 1,
      ]);
      return linha?.n ?? 0;
    },

    criar: (data: Prisma.ReproducaoUncheckedCreateInput, cliente: DbClient = db) => cliente.reproducao.create({ data }),

    buscar: (id: string, cliente: DbClient = db) => cliente.reproducao.findUnique({ where: { id } }),

    async listar(filtro: { assinatura_id?: string }, { pagina, tamanho }: PageRequest) {
      const where = filtro.assinatura_id ? { assinaturaId: filtro.assinatura_id } : {};
      const [itens, total] = await Promise.all([
        db.reproducao.findMany({
          where,
          orderBy: [{ criadaEm: 'desc' }, { id: 'desc' }],
          skip: Math.min((pagina - 1) * tamanho, Number.MAX_SAFE_INTEGER),
          take: tamanho,
        }),
        db.reproducao.count({ where }),
      ]);
      return { itens, total };
    },

    /**
     * Cancels a replay not yet final. A batch under way holds the row: this waits for its commit,
     * so the replay stops at the next batch and no batch runs half-cancelled.
     */
    cancelar: (id: string, agora: Date, cliente: DbClient = db) =>
      cliente.reproducao.updateMany({
        where: { id, situacao: { in: ['pendente', 'em_andamento'] } },
        data: { situacao: 'cancelada', atualizadaEm: agora, concluidaEm: agora, emVoo: [] },
      }),
  };
}
export type ReproducaoRepository = ReturnType<typeof reproducaoRepository>;
