import { executeOnPrisma, runOnPrisma } from '@hub/database';
import type { DbClient } from '@hub/hub-data';
import {
  ISOLAMENTO_CONCLUIR_REMOCAO,
  ISOLAMENTO_ISOLAR,
  ISOLAMENTO_LER,
  ISOLAMENTO_SAIR,
  ISOLAMENTO_TOMAR_REMOCAO,
} from './isolamento.sql';

/** Where an isolated destination is in its life (migration 015). */
export type Estado = 'isolada' | 'saindo' | 'removendo';
export type Motivo = 'retida' | 'acumulo';

/** An isolated destination as this process last read it. */
export interface Isolada {
  id: string;
  origem: string;
  estado: Estado;
  /** saindo for longer than the grace: nobody consumes its queue any more */
  parada: boolean;
  /** its queue may be removed now (or a removal that stalled may be taken over) */
  removivel: boolean;
  /** isolated for longer than the quiet period: it may start going back */
  assentada: boolean;
}

/** The waits of an isolated destination's life (DELIVERY_ISOLATION_*). */
export interface PrazosDoIsolamento {
  /** How long a destination going back is still consumed before its consumers stop. */
  carenciaMs: number;
  /**
   * After the grace, how long before its queue is removed: every worker has stopped its consumer
   * (two refreshes) and every job it had taken is settled (a claim's lease).
   */
  margemMs: number;
  /** How long an isolated destination, not held, keeps its queue empty before it starts going back. */
  quietudeMs: number;
  /**
   * The most destinations with a queue of their own at once (each is a quorum queue and a consumer
   * per worker); past it, a held destination's jobs wait in the delay queues and a backlog stays in
   * the shared queue. A soft bound: two workers isolating at the same instant may pass it by one.
   */
  maximo: number;
}

/**
 * The statements of fair scheduling's rows (destino.isolamento): every transition is one conditional
 * UPDATE, so any number of workers can try it and one does it.
 */
export function isolamentoRepository(db: DbClient, prazos: PrazosDoIsolamento) {
  return {
    /**
     * The row locked first: a worker isolating it at the same time is waited for and its change is
     * what `alvo` reads (a plain read would see the row as the statement began, not isolated, and
     * this job would take the delay queue's way for nothing).
     */
    async isolar(origem: string, motivo: Motivo) {
      const [linha] = await runOnPrisma(db, ISOLAMENTO_ISOLAR, [origem, motivo, prazos.maximo, prazos.carenciaMs]);
      return linha;
    },

    ler() {
      const { carenciaMs, margemMs, quietudeMs } = prazos;
      return runOnPrisma(db, ISOLAMENTO_LER, [carenciaMs, carenciaMs + margemMs, margemMs, quietudeMs]);
    },

    /** Starts going back (saindo), if still isolated for longer than the quiet period: the rows changed. */
    sair(id: string): Promise<number> {
      return executeOnPrisma(db, ISOLAMENTO_SAIR, [id, prazos.quietudeMs]);
    },

    /** Takes the removal of a queue (removendo), or one that stalled: the rows changed. */
    tomarRemocao(id: string): Promise<number> {
      return executeOnPrisma(db, ISOLAMENTO_TOMAR_REMOCAO, [id, prazos.carenciaMs + prazos.margemMs, prazos.margemMs]);
    },

    /** The queue is gone: the row says shared again. */
    async concluirRemocao(id: string): Promise<void> {
      await executeOnPrisma(db, ISOLAMENTO_CONCLUIR_REMOCAO, [id]);
    },
  };
}
export type IsolamentoRepository = ReturnType<typeof isolamentoRepository>;
