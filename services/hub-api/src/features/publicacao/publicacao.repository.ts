import type { DbClient } from '../../db';
import type { Prisma } from '@hub/hub-data';

/** The tally slices of resumo_por_hora (0–15): concurrent publications spread over them. */
const FATIAS = 16;
const HORA_MS = 3_600_000;

/** The hour (UTC) a tally of this instant belongs to. */
export const horaDe = (instante: Date) => new Date(Math.floor(instante.getTime() / HORA_MS) * HORA_MS);

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
        insert into resumo_por_hora (hora, fatia, recusados) values (${horaDe(instante)}, ${Math.floor(Math.random() * FATIAS)}, 1)
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
