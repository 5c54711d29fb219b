import { type DedicatedSession, runOnPrisma } from '@hub/database';
import type { DbClient } from '../../db';
import type { Situacao } from '../eventos/eventos.schemas';
import { FILA_DESTINOS_COM_FILA, FILA_ESTADOS, FILA_MARCAR_ENVENENADAS, FILA_NA_FILA_DE_ERRO } from './fila.sql';

/** A delivery as a batch of the reconciliation read it. */
export interface EstadoDaEntrega {
  id: string;
  situacao: Situacao;
  atualizada_em: Date;
}

/** A delivery in fila_de_erro, with what its rebuilt message's headers say. */
export interface EntregaNaFilaDeErro {
  id: string;
  criada_em: Date;
  tentativas_no_ciclo_atual: number;
  ultimo_erro: string | null;
}

/** A position in the (criada_em, id) order of the deliveries. */
export type Cursor = Pick<EntregaNaFilaDeErro, 'criada_em' | 'id'>;

export const INICIO: Cursor = {
  criada_em: new Date('0001-01-01T00:00:00.000Z'),
  id: '00000000-0000-0000-0000-000000000000',
};

const ERRO_DA_ENVENENADA = 'the job was dead-lettered by the work queue after repeated deliveries (poison job)';

/** The statements of the error queue's reconciliation and looks; each one a short transaction of its own. */
export function filaRepository(db: DbClient) {
  return {
    /** These deliveries now, by id (an id absent from the map no longer exists). */
    async estados(ids: readonly string[]): Promise<Map<string, EstadoDaEntrega>> {
      if (ids.length === 0) return new Map();
      const linhas = await runOnPrisma(db, FILA_ESTADOS, [ids]);
      return new Map(linhas.map((l) => [l.id, l]));
    },

    /**
     * Marks fila_de_erro, in one statement, the deliveries of poison jobs that are still as they
     * were read (same situacao and atualizada_em: a row the worker moved meanwhile owns its
     * delivery). The ids it marked. Safe to repeat: a marked row no longer matches.
     */
    async marcarEnvenenadas(entregas: readonly EstadoDaEntrega[], agora: Date): Promise<Set<string>> {
      if (entregas.length === 0) return new Set();
      const linhas = await runOnPrisma(db, FILA_MARCAR_ENVENENADAS, [
        agora,
        ERRO_DA_ENVENENADA,
        entregas.map((e) => e.id),
        entregas.map((e) => e.situacao),
        entregas.map((e) => e.atualizada_em),
      ]);
      return new Set(linhas.map((l) => l.id));
    },

    /** The destinations with a queue of their own (isolated, going back or being removed), by origin. */
    destinosComFila: () => runOnPrisma(db, FILA_DESTINOS_COM_FILA),

    /** Up to `limite` deliveries in fila_de_erro since before `antesDe`, after `depois` in (criada_em, id) order. */
    naFilaDeErro(antesDe: Date, depois: Cursor, limite: number): Promise<EntregaNaFilaDeErro[]> {
      return runOnPrisma(db, FILA_NA_FILA_DE_ERRO, [antesDe, depois.criada_em, depois.id, limite]);
    },
  };
}
export type FilaRepository = ReturnType<typeof filaRepository>;

/**
 * The two session-level advisory locks of the error queue, as (class, key) pairs. PASSE: one
 * reconciliation pass at a time across every hub-api. LEITURA: whoever reads the queue message by
 * message; a pass takes it exclusively, a look shared (looks do not disturb each other, a pass and
 * a look would each see only part of the queue). 4242001 is the migrations' lock.
 */
export const TRAVAS = { classe: 4242022, passe: 1, leitura: 2 } as const;
const { classe: CLASSE, passe: PASSE, leitura: LEITURA } = TRAVAS;

/** SQLSTATE lock_not_available: lock_timeout ran out. */
const SEM_TRAVA = '55P03';

/** The lock statements, on a session of their own (a lock lives as long as that session). */
export function travasRepository(sessao: DedicatedSession) {
  const tentar = async (funcao: string, chave: number): Promise<boolean> => {
    const [linha] = await sessao.consultar<{ ok: boolean }>(`select ${funcao}($1, $2) as ok`, [CLASSE, chave]);
    return linha?.ok === true;
  };
  return {
    /** Takes PASSE if no other pass holds it. */
    tentarPasse: () => tentar('pg_try_advisory_lock', PASSE),
    /** Takes LEITURA shared unless a pass holds it or waits for it (a waiting pass goes first). */
    tentarLeituraCompartilhada: () => tentar('pg_try_advisory_lock_shared', LEITURA),
    /** Takes LEITURA exclusively, waiting up to `esperaMs` for the looks under way; false when they outlast it. */
    async esperarLeituraExclusiva(esperaMs: number): Promise<boolean> {
      await sessao.consultar(`select set_config('lock_timeout', $1, false)`, [`${esperaMs}ms`]);
      try {
        await sessao.consultar('select pg_advisory_lock($1, $2)', [CLASSE, LEITURA]);
        return true;
      } catch (error) {
        if ((error as { code?: string }).code === SEM_TRAVA) return false;
        throw error;
      }
    },
  };
}
