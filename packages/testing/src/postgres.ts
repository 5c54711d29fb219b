import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@hub/database/test-support';
import pg from 'pg';
import { waitFor } from './wait';

/** How a running server is stopped: PostgreSQL's shutdown modes (`pg_ctl -m`), or SIGKILL of the postmaster. */
export type StopMode = 'smart' | 'fast' | 'immediate' | 'kill';

const SIGNALS: Record<StopMode, NodeJS.Signals> = {
  smart: 'SIGTERM',
  fast: 'SIGINT', // clients get 57P01 "terminating connection due to administrator command"
  immediate: 'SIGQUIT', // no checkpoint; crash recovery at the next start
  kill: 'SIGKILL',
};

export interface PrivatePostgres {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres`: the admin database, trust authentication. */
  readonly url: string;
  readonly port: number;
  /** Whether the server is up (started and not stopped since). */
  readonly running: boolean;
  /** A fresh, migrated database on this server (the same template scheme as `createTestDatabase`). */
  database(prefix: string, migrationsDir: string): Promise<TestDatabase>;
  /** Stops the server (default `fast`) and keeps its data: the outage starts. */
  stop(mode?: StopMode): Promise<void>;
  /** SIGKILL of the postmaster (`stop('kill')`): a crash; the next `start()` recovers. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /** `stop(mode)` then `start()`. */
  restart(mode?: StopMode): Promise<void>;
  /**
   * SIGSTOP to the postmaster and every backend: the server hangs without closing anything (a
   * stalled host, a frozen VM). Connections stay open, nothing is answered, new ones are accepted by
   * the kernel and never started. `descongelar()` (SIGCONT) resumes it where it was.
   */
  congelar(): void;
  descongelar(): void;
  /** Everything the server logged so far. */
  log(): string;
  /** Stops it at once and deletes its data directory. Call in afterAll. */
  close(): Promise<void>;
}

function binDir(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    const root = '/usr/lib/postgresql';
    const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
    if (versions[0]) return path.join(root, versions[0], 'bin');
    throw new Error('PostgreSQL binaries not found: set PG_BINDIR');
  }
}

/** initdb and postgres refuse to run as root: as root, run them as the `postgres` user. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * A PostgreSQL server of its own for a test that breaks the database (restart, crash, outage),
 * never the shared one other tests run against. `initdb` into a temporary directory, `postgres`
 * on a free port of 127.0.0.1 (socket in the same directory), fsync off (a commit acknowledged survives
 * `kill()`, only not a crash of the machine). `stop('fast')` gives the
 * clients 57P01 as `pg_ctl restart -m fast` does; `stop('immediate')` and `kill()` a crash.
 *
 *   const pg = await startPrivatePostgres();
 *   const db = await pg.database('hub_api', migrationsDir);   // give db.url to the service
 *   await pg.restart('fast');                                  // or stop() … start()
 *   await pg.close();
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const user = runAs();
  const dir = mkdtempSync(path.join(tmpdir(), 'hub-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = path.join(dir, 'data');
  execFileSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
    ...user,
    stdio: 'ignore',
  });
  const port = await freePort();
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  let output = '';
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const ready = () =>
    waitFor(
      async () => {
        if (!child) throw new Error(`postgres exited:\n${output.slice(-2_000)}`);
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
        client.on('error', () => undefined);
        try {
          await client.connect();
          await client.query('select 1');
          return true;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      { timeoutMs: 30_000, intervalMs: 50, what: `private PostgreSQL on port ${port}` },
    );

  const start = async (): Promise<void> => {
    if (child) return;
    // After a SIGKILL the old backends may hold the shared memory a moment: retry until it is free.
    await waitFor(
      async () => {
        const started = spawn(
          path.join(bin, 'postgres'),
          [
            ...['-D', data, '-p', String(port), '-k', dir],
            // fsync off is safe for what the tests do (the postmaster killed, never the machine: the
            // kernel keeps what was written); synchronous_commit stays on, or a kill would lose
            // commits already acknowledged, and a test could not tell that from a real loss.
            ...['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
            ...['-c', 'full_page_writes=off', '-c', 'max_connections=200', '-c', 'shared_buffers=32MB'],
          ],
          { ...user, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        started.stdout!.on('data', (chunk) => {
          output += chunk;
        });
        started.stderr!.on('data', (chunk) => {
          output += chunk;
        });
        live.add(started);
        child = started;
        exited = new Promise((resolve) =>
          started.once('exit', () => {
            live.delete(started);
            if (child === started) child = undefined;
            resolve();
          }),
        );
        try {
          await ready();
          return true;
        } catch (error) {
          started.kill('SIGKILL');
          await exited;
          throw error;
        }
      },
      { timeoutMs: 60_000, intervalMs: 200, what: `private PostgreSQL to start on port ${port}` },
    );
  };

  const stop = async (mode: StopMode = 'fast'): Promise<void> => {
    const running = child;
    if (!running) return;
    running.kill(SIGNALS[mode]);
    await exited;
  };

  /** The postmaster and its children (backends, background processes), by their parent pid in /proc. */
  const processos = (): number[] => {
    const postmaster = child?.pid;
    if (postmaster === undefined) return [];
    const filhos = readdirSync('/proc')
      .filter((nome) => /^\d+$/.test(nome))
      .filter((nome) => {
        try {
          // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ')'.
          const stat = readFileSync(`/proc/${nome}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false; // ended meanwhile
        }
      })
      .map(Number);
    return [postmaster, ...filhos];
  };
  const sinalizar = (sinal: NodeJS.Signals) => {
    for (const pid of processos())
      try {
        process.kill(pid, sinal);
      } catch {
        // ended meanwhile
      }
  };

  await start();
  return {
    url,
    port,
    get running() {
      return child !== undefined;
    },
    database: (prefix, migrationsDir) => createTestDatabase(prefix, migrationsDir, url),
    stop,
    kill: () => stop('kill'),
    start,
    restart: async (mode = 'fast') => {
      await stop(mode);
      await start();
    },
    congelar: () => sinalizar('SIGSTOP'),
    descongelar: () => sinalizar('SIGCONT'),
    log: () => output,
    close: async () => {
      sinalizar('SIGCONT');
      await stop('immediate');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
