import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** The processes of a private Patroni cluster: killed when the test process exits, whatever happened. */
const vivos = new Set<number>();
process.once('exit', () => {
  for (const pid of vivos) sinal(pid, 'SIGKILL');
});

export function sinal(pid: number, s: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, s);
    return true;
  } catch {
    return false;
  }
}
export const existe = (pid: number) => sinal(pid, 0);

export function freePort(taken: Set<number>): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => {
        if (taken.has(port)) return resolve(freePort(taken));
        taken.add(port);
        resolve(port);
      });
    });
  });
}

/** A postmaster (from its data directory's postmaster.pid) and its children, by parent pid in /proc. */
export function processosDoPostgres(dataDir: string): number[] {
  const arquivo = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(arquivo)) return [];
  const postmaster = Number(readFileSync(arquivo, 'utf8').split('\n')[0]);
  if (!postmaster || !existe(postmaster)) return [];
  const filhos = readdirSync('/proc')
    .filter((nome) => /^\d+$/.test(nome))
    .filter((nome) => {
      try {
        const stat = readFileSync(`/proc/${nome}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...filhos];
}

export interface Processo {
  child?: ChildProcess;
  exited: Promise<void>;
  output: string;
}

export function iniciar(
  cmd: string,
  args: string[],
  opcoes: { uid?: number; gid?: number; cwd: string; env: NodeJS.ProcessEnv },
) {
  const p: Processo = { output: '', exited: Promise.resolve() };
  const child = spawn(cmd, args, { ...opcoes, stdio: ['ignore', 'pipe', 'pipe'] });
  const guardar = (chunk: Buffer) => {
    p.output = (p.output + chunk.toString('utf8')).slice(-64 * 1024);
  };
  child.stdout!.on('data', guardar);
  child.stderr!.on('data', guardar);
  if (child.pid) vivos.add(child.pid);
  p.child = child;
  p.exited = new Promise((resolve) =>
    child.once('exit', () => {
      if (child.pid) vivos.delete(child.pid);
      p.child = undefined;
      resolve();
    }),
  );
  return p;
}
