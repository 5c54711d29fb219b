import { DedicatedSession } from '@hub/database';
import { AppError } from '@hub/http';
import type { Logger } from '@hub/log';
import { travasRepository } from './fila.repository';

/** Seconds an operator is told to wait while a pass runs (a pass over a large queue takes minutes; a small one, seconds). */
export const CONCILIACAO_RETRY_AFTER_S = 10;

/** How long a pass waits for the looks under way to end before giving up (a look takes well under a second). */
const ESPERA_PELAS_OLHADAS_MS = 30_000;

export const conciliacaoEmAndamento = (detail: string) =>
  new AppError(409, 'conciliacao_em_andamento', detail, undefined, {
    'Retry-After': String(CONCILIACAO_RETRY_AFTER_S),
  });

const leituraEmAndamento = () =>
  new AppError(
    409,
    'leitura_em_andamento',
    `looks at the error queue kept it for ${ESPERA_PELAS_OLHADAS_MS / 1000} s; send the request again after Retry-After`,
    undefined,
    { 'Retry-After': String(CONCILIACAO_RETRY_AFTER_S) },
  );

/** A lock held on a dedicated session: released when the session ends, however it ends. */
export interface Trava {
  /** Rejects when the session (and so the lock) is gone: the work it guards must stop before its next step. */
  confirmar(): Promise<void>;
  soltar(): Promise<void>;
}

/**
 * The locks that keep the readers of the error queue apart across every hub-api, each held by a
 * session-level advisory lock on a connection of its own (never a pool's, never a transaction
 * open across RabbitMQ). A pass takes PASSE and then LEITURA exclusively; a look only tries
 * LEITURA shared, so it never waits behind a pass: it is refused with 409 while one runs.
 */
export function travaDaFilaDeErro(databaseUrl: string, logger?: Logger) {
  /** A new session that keeps what `tomar` took (true), or is closed at once (false, or a failure). */
  async function comSessao(tomar: (sessao: DedicatedSession) => Promise<boolean>): Promise<Trava | undefined> {
    const sessao = await DedicatedSession.abrir(databaseUrl, 'hub-api.fila-de-erro', logger);
    try {
      if (!(await tomar(sessao))) {
        await sessao.fechar();
        return undefined;
      }
    } catch (error) {
      await sessao.fechar();
      throw error;
    }
    return { confirmar: () => sessao.confirmar(), soltar: () => sessao.fechar() };
  }

  return {
    /**
     * The lock of a pass, or undefined while another pass holds it. Once it has PASSE it waits for
     * the looks under way (new ones are refused meanwhile: a waiting exclusive lock goes first).
     */
    paraConciliar: (): Promise<Trava | undefined> =>
      comSessao(async (sessao) => {
        const travas = travasRepository(sessao);
        if (!(await travas.tentarPasse())) return false;
        if (!(await travas.esperarLeituraExclusiva(ESPERA_PELAS_OLHADAS_MS))) throw leituraEmAndamento();
        return true;
      }),

    /** The lock of a look; 409 conciliacao_em_andamento while a pass holds the queue or waits for it. */
    async paraOlhar(): Promise<Trava> {
      const trava = await comSessao((sessao) => travasRepository(sessao).tentarLeituraCompartilhada());
      if (!trava)
        throw conciliacaoEmAndamento('a reconciliation of the error queue is under way; look again after Retry-After');
      return trava;
    },
  };
}
export type TravaDaFilaDeErro = ReturnType<typeof travaDaFilaDeErro>;
