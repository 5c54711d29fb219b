import type { Logger } from '@hub/log';
import pg from 'pg';
import { CONEXAO } from './pool';

/**
 * One connection of its own, outside every pool, for what must live as long as a session: a
 * session-level advisory lock held while the work it guards happens elsewhere (broker I/O, short
 * transactions on the pool). Closing the session, or losing it, releases such locks at once, so a
 * holder that dies never leaves them behind, and no pool connection is held for the whole work.
 *
 * A lost connection (terminated backend, restart) is recorded, never thrown as an unhandled
 * 'error' event; every later statement rejects with that error. `confirmar` asks the database
 * (one round trip) whether the session, and so every lock it holds, is still there.
 */
export class DedicatedSession {
  private perdida?: Error;
  private fechada = false;

  private constructor(private readonly client: pg.Client) {}

  /** Connects; `name` is the session's application_name in pg_stat_activity. */
  static async abrir(url: string, name: string, logger?: Logger): Promise<DedicatedSession> {
    const client = new pg.Client({ connectionString: url, application_name: name, ...CONEXAO });
    const sessao = new DedicatedSession(client);
    client.on('error', (error) => {
      sessao.perdida ??= error;
      if (!sessao.fechada) logger?.warn({ err: error, session: name }, 'dedicated database session lost');
    });
    client.on('end', () => {
      sessao.perdida ??= new Error('Connection terminated: the dedicated session ended');
    });
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return sessao;
  }

  /** The PostgreSQL backend of the session (pg_stat_activity.pid, pg_locks.pid). */
  get pid(): number | undefined {
    return (this.client as pg.Client & { processID?: number }).processID;
  }

  /** The rows of one statement run on this session; rejects once the session was lost. */
  async consultar<T extends object>(texto: string, valores: unknown[] = []): Promise<T[]> {
    if (this.perdida) throw this.perdida;
    return (await this.client.query<T>(texto, valores)).rows;
  }

  /** Resolves only when the session answers now: what it holds is still held. */
  async confirmar(): Promise<void> {
    await this.consultar('select 1');
  }

  /** Ends the session, releasing whatever it holds; never throws. */
  async fechar(): Promise<void> {
    this.fechada = true;
    await this.client.end().catch(() => undefined);
  }
}
