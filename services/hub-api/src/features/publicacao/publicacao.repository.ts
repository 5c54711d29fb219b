import type { DbClient } from '../../db';
import { fatiaDoResumo, horaDoResumo, type Prisma } from '@hub/hub-data';

export interface NovoEvento {
  id: string;
  tipoDeEventoId: string;
  versaoDoEsquema: number;
  aplicativoPublicadorId: string;
  entidadeId: string;
  ocorridoEm: Date;
  recebidoEm: Date;
  publicadoPeloEmail: string | null;
  /** dados as the publisher wrote them (JSON text), stored verbatim in the json column. */
  dadosTexto: string;
}

export interface ChaveGuardada {
  impressao: string;
  eventoId: string;
  criadaEm: Date;
}

/** Every function takes the client or a transaction (`cliente`, the base client when absent). */
export function publicacaoRepository(db: DbClient) {
  return {
    /** The subscriptions that receive a new event of this type and version. */
    assinaturasAtivas: (tipoDeEventoId: string, versaoDoEsquema: number, cliente: DbClient = db) =>
      cliente.assinatura.findMany({
        where: { tipoDeEventoId, versaoDoEsquema, ativa: true, excluidaEm: null },
        select: {
          id: true,
          aplicativoAssinanteId: true,
          urlDeDestino: true,
          maximoDeTentativas: true,
          aplicativoAssinante: { select: { nome: true } },
        },
        orderBy: { id: 'asc' },
      }),

    /** +1 refused in the summary's tally of the hour; a random slice, so concurrent writers rarely meet. */
    async contarRecusa(instante: Date, cliente: DbClient = db): Promise<void> {
      await cliente.$executeRaw`
        insert into resumo_por_hora (hora, fatia, recusados) values (${horaDoResumo(instante)}, ${fatiaDoResumo()}, 1)
        on conflict (hora, fatia) do update set recusados = resumo_por_hora.recusados + 1`;
    },

    buscarChave: (escopo: string, chave: string, cliente: DbClient = db): Promise<ChaveGuardada | null> =>
      cliente.chaveDeIdempotencia.findUnique({
        where: { escopo_chave: { escopo, chave } },
        select: { impressao: true, eventoId: true, criadaEm: true },
      }),

    inserirRecusado: (data: Prisma.EventoRecusadoUncheckedCreateInput, cliente: DbClient = db) =>
      cliente.eventoRecusado.create({ data, select: { id: true } }),
  };
}
export type PublicacaoRepository = ReturnType<typeof publicacaoRepository>;
