// CPU time by process, read from /proc (Linux): where a benchmark's CPU went, process by process.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux this runs on

/** Who a process is, for the account: the platform's service, the database, the broker, or the rest. */
function classe(pid: number, cmdline: string): string {
  if (pid === process.pid) return 'benchmark (load and receivers)';
  if (cmdline.startsWith('postgres') || cmdline.includes('/bin/postgres')) return 'PostgreSQL';
  if (cmdline.includes('beam.smp')) return 'RabbitMQ';
  const servico = /services\/([\w-]+)\//.exec(cmdline);
  if (servico) return servico[1]!;
  const bench = /bench\/([\w/-]+)\.ts/.exec(cmdline);
  if (bench) return `bench/${bench[1]}`;
  return 'other';
}

/** /proc/<pid>/stat's fields after the command's ")" (it may hold spaces): [0] is the state (field 3), [11] utime (14) … [14] cstime (17). */
function camposDoStat(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds one process has spent so far, user and system. */
export function segundosDeCpu(pid: number): number {
  const campos = camposDoStat(pid);
  return (Number(campos[11]) + Number(campos[12])) / TICKS_PER_SECOND;
}

interface Amostra {
  /** pid → [class, CPU ticks so far (own, and for the PostgreSQL server its exited backends too)] */
  processos: Map<number, [string, number]>;
  /** The PostgreSQL server's processes (backends of every database): at exit their whole life joins the postmaster's. */
  postgres: Set<number>;
  /** busy and all ticks of the whole machine */
  ocupado: number;
  total: number;
  em: number;
}

/** Classes counted whoever started the process: the shared servers and this process itself. */
const COMPARTILHADAS = new Set(['PostgreSQL', 'RabbitMQ', 'benchmark (load and receivers)']);

/** A PostgreSQL backend's database, from its title (`postgres: [cluster: ]user database host(port) state`). */
const BACKEND = /^postgres: (?:\S+: )?\S+ (\S+) (?:\S*\(\d+\)|\[local\])/;

/**
 * `bancos`: the databases that are the benchmark's. When given, a backend serving another database,
 * and the backends that exited (their time is the postmaster's, whoever they served), are 'other':
 * other sessions' tests on the same server are not counted as the benchmark's PostgreSQL.
 */
function amostrar(bancos?: (nome: string) => boolean): Amostra {
  const processos = new Map<number, [string, number]>();
  const postgres = new Set<number>();
  const pais = new Map<number, number>();
  for (const nome of readdirSync('/proc')) {
    const pid = Number(nome);
    if (!Number.isInteger(pid)) continue;
    try {
      const campos = camposDoStat(pid);
      pais.set(pid, Number(campos[1]));
      const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(campos[i]));
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      let c = classe(pid, cmdline);
      if (c === 'PostgreSQL') postgres.add(pid);
      const banco = c === 'PostgreSQL' ? BACKEND.exec(cmdline)?.[1] : undefined;
      if (bancos && banco !== undefined && !bancos(banco)) c = 'other';
      // A backend that exits is added to its parent's cutime: the postmaster's keeps them all.
      const filhos = c === 'PostgreSQL' ? cutime! + cstime! : 0;
      if (bancos && filhos > 0) processos.set(-pid, ['other', filhos]);
      processos.set(pid, [c, utime! + stime! + (bancos ? 0 : filhos)]);
    } catch {
      // gone meanwhile
    }
  }
  // A service or bench script that this process did not start (another session's) is 'other'.
  const descende = (pid: number) => {
    for (let p = pais.get(pid), passos = 0; p && passos < 64; p = pais.get(p), passos++)
      if (p === process.pid) return true;
    return false;
  };
  for (const [pid, conta] of processos) if (!COMPARTILHADAS.has(conta[0]) && !descende(pid)) conta[0] = 'other';
  return { processos, postgres, ...cpuDaMaquina(), em: performance.now() };
}

/** The machine's CPU time so far, every CPU (/proc/stat, in ticks): busy, and in all (idle and iowait included). */
export function cpuDaMaquina(): { ocupado: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  return { ocupado: total - cpu[3]! - cpu[4]!, total };
}

/** CPU seconds each class of process spent between two samples, and the machine's busy share. */
export interface ContaDeCpu {
  segundos: number;
  porClasse: [string, number][];
  ocupacao: number;
  /** CPU seconds the whole machine spent busy (every CPU, every process: /proc/stat). */
  ocupadoSegundos: number;
}

/**
 * Starts counting now; `fim()` gives the account since then. `bancos`: the benchmark's databases, when
 * the PostgreSQL server is shared (see amostrar).
 */
export function contarCpu(bancos?: (nome: string) => boolean): { fim(): ContaDeCpu } {
  const inicio = amostrar(bancos);
  return {
    fim() {
      const fim = amostrar(bancos);
      const porClasse = new Map<string, number>();
      for (const [pid, [c, ticks]] of fim.processos) {
        const antes = inicio.processos.get(pid)?.[1] ?? 0;
        porClasse.set(c, (porClasse.get(c) ?? 0) + Math.max(0, ticks - antes) / TICKS_PER_SECOND);
      }
      // A PostgreSQL backend that exited during the span (a pool closing an idle connection) reached
      // the postmaster's cutime with its whole life: the part before the span is not the span's. It
      // made the paced rows of bench/publication/throughput-and-latency.ts, after the saturation rows' busy
      // connections closed, count more PostgreSQL CPU than the machine spent.
      const viaPostmaster = bancos ? 'other' : 'PostgreSQL';
      for (const pid of inicio.postgres)
        if (!fim.processos.has(pid)) {
          const antes = (inicio.processos.get(pid)?.[1] ?? 0) / TICKS_PER_SECOND;
          porClasse.set(viaPostmaster, Math.max(0, (porClasse.get(viaPostmaster) ?? 0) - antes));
        }
      return {
        segundos: (fim.em - inicio.em) / 1000,
        porClasse: [...porClasse].filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1]),
        ocupacao: (fim.ocupado - inicio.ocupado) / Math.max(1, fim.total - inicio.total),
        ocupadoSegundos: (fim.ocupado - inicio.ocupado) / TICKS_PER_SECOND,
      };
    },
  };
}

/** "PostgreSQL 1.21 ms, RabbitMQ 0.80 ms, …": CPU per unit of work (an event, a delivery), by process. */
export function cpuPorUnidade(conta: ContaDeCpu, unidades: number, minimoMs = 0.02): string {
  const partes = conta.porClasse
    .map(([c, s]) => [c, (s * 1000) / Math.max(1, unidades)] as const)
    .filter(([, ms]) => ms >= minimoMs)
    .map(([c, ms]) => `${c} ${ms.toFixed(2)} ms`);
  const total = conta.porClasse.reduce((a, [, s]) => a + s, 0);
  return `${partes.join(', ')}; in all ${((total * 1000) / Math.max(1, unidades)).toFixed(2)} ms (machine busy ${(conta.ocupacao * 100).toFixed(0)} % of ${conta.segundos.toFixed(1)} s)`;
}
