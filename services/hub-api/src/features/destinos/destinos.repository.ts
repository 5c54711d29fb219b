import { runOnPrisma, uuidv7 } from '@hub/database';
import { origemDaUrl } from '@hub/destinations';
import type { PageRequest } from '@hub/http';
import { skipTake } from '@hub/http';
import type { DbClient } from '../../db';
import { DESTINO_FECHAR_CIRCUITO, DESTINO_FIGURAS, DESTINO_HISTORICO } from './destinos.sql';

/** Figures of destinations that come from other tables, read from their indexes. */
export interface Figuras {
  id: string;
  assinaturas: number;
  em_andamento: number;
  tentativas: number;
  falhas: number;
  duracoes: number[] | null;
}

/** One transition of a circuit (destino_circuito). */
export interface Transicao {
  em: Date;
  de: string;
  para: string;
  motivo: string;
  detalhe: string;
  falhas: number | null;
  tentativas: number | null;
  aberto_ate: Date | null;
  por: string | null;
}

export function destinosRepository(db: DbClient) {
  return {
    async listar(page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.destino.findMany({ orderBy: [{ origem: 'asc' }], ...skipTake(page) }),
        cliente.destino.count(),
      ]);
      return { itens, total };
    },
    buscar: (id: string, cliente: DbClient = db) => cliente.destino.findUnique({ where: { id } }),
    atualizar: (
      id: string,
      dados: { concorrenciaMaxima?: number; limitePorSegundo?: number | null; pausado?: boolean; retomadoEm?: Date },
      cliente: DbClient = db,
    ) => cliente.destino.update({ where: { id }, data: { ...dados, atualizadoEm: new Date() } }),

    /** The row of a subscription URL's origin, created when missing (in the caller's transaction). */
    async garantir(url: string, cliente: DbClient = db): Promise<void> {
      const agora = new Date();
      await cliente.destino.createMany({
        data: [{ id: uuidv7(), origem: origemDaUrl(url), criadoEm: agora, atualizadoEm: agora }],
        skipDuplicates: true,
      });
    },

    /** The latest transitions of each destination's circuit, newest first (the index on (destino_id, em)). */
    async historico(ids: string[], limite: number, cliente: DbClient = db): Promise<Map<string, Transicao[]>> {
      const porDestino = new Map<string, Transicao[]>();
      if (ids.length === 0) return porDestino;
      const linhas = await runOnPrisma(cliente, DESTINO_HISTORICO, [ids, limite]);
      for (const { destino_id, ...t } of linhas) {
        const lista = porDestino.get(destino_id) ?? [];
        lista.push(t);
        porDestino.set(destino_id, lista);
      }
      return porDestino;
    },

    /**
     * Closes a destination's circuit by hand, with its line of history: the workers obey within a
     * refresh, and a probe under way no longer counts (its token is gone). Nothing when it is closed
     * already. Gives the state it left (null: it was closed).
     */
    async fecharCircuito(id: string, por: string | null, cliente: DbClient = db): Promise<string | null> {
      const mudou = await runOnPrisma(cliente, DESTINO_FECHAR_CIRCUITO, [id, uuidv7(), por]);
      return mudou[0]?.de ?? null;
    },

    /**
     * Subscriptions, attempts in flight (as the workers last reported them, their reports still
     * valid) and the last hour's attempts of each destination given.
     */
    async figuras(ids: string[], desde: Date, cliente: DbClient = db): Promise<Map<string, Figuras>> {
      if (ids.length === 0) return new Map();
      const linhas = await runOnPrisma(cliente, DESTINO_FIGURAS, [ids, desde]);
      return new Map(linhas.map((linha) => [linha.id, linha]));
    },
  };
}
export type DestinosRepository = ReturnType<typeof destinosRepository>;
export type DestinoLinha = NonNullable<Awaited<ReturnType<DestinosRepository['buscar']>>>;
