import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { configDoHaproxy, configDoMembro, type Membro, pgBinDir, programasDoPatroni } from './patroni-config';
import { freePort, iniciar, type Processo, processosDoPostgres, sinal } from './patroni-processes';
import { waitFor } from './wait';

const run = promisify(execFile);

/** A member as Patroni's REST `/cluster` reports it. */
export interface MembroDoCluster {
  name: string;
  role: 'leader' | 'sync_standby' | 'replica' | string;
  state: string;
  port: number;
  timeline?: number;
}

export interface PrivatePatroni {
  /** HAProxy's read-write port: `postgresql://postgres@127.0.0.1:<rw>/postgres`, always the primary. */
  readonly url: string;
  /** HAProxy's read-only port, balanced over the standbys. */
  readonly readUrl: string;
  /** The members' names (`n1`, `n2`, `n3`). */
  readonly membros: string[];
  /** The members' PostgreSQL ports, by name. */
  readonly portas: Record<string, number>;
  /** What Patroni's REST API says of the cluster now (asked of a running member). */
  cluster(): Promise<MembroDoCluster[]>;
  /** The member leading now, once one leads and runs (waits up to 60 s); `outroQue` waits for another one. */
  primario(outroQue?: string): Promise<string>;
  /** The synchronous standby now, once there is one (waits up to 60 s); `outroQue` waits for another one. */
  standbySincrono(outroQue?: string): Promise<string>;
  /** Whether member `nome` (its Patroni) runs. */
  running(nome: string): boolean;
  /** SIGKILL to the member's Patroni, then to its postmaster and every backend: gone for good. */
  kill(nome: string): Promise<void>;
  /** patronictl against the cluster; its stdout. */
  patronictl(args: string[]): Promise<string>;
  /** `patronictl switchover --force`: the primary hands over to the synchronous standby; resolves once it leads. */
  switchover(): Promise<{ de: string; para: string }>;
  /** What a member's Patroni (and its PostgreSQL) logged, or HAProxy's / etcd's with `haproxy` / `etcd`. */
  log(nome: string): string;
  /** Kills everything and removes the data. Call in afterAll. */
  close(): Promise<void>;
}

/** Which server HAProxy's port leads to now: its PostgreSQL port and whether it is in recovery. */
async function servidorAtras(url: string): Promise<{ porta: number; recuperando: boolean }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ porta: number; recuperando: boolean }>(
      'select inet_server_port() as porta, pg_is_in_recovery() as recuperando',
    );
    return rows[0]!;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The user Patroni and PostgreSQL run as: `postgres` when the test runs as root (PostgreSQL refuses root). */
function usuario(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** The temporary directory, free ports and each member's directory and patroni.yml. */
async function prepararDiretorio(quantos: number) {
  const dono = usuario();
  const chown = (alvo: string) => dono.uid !== undefined && chownSync(alvo, dono.uid, dono.gid!);
  const dir = mkdtempSync(path.join(tmpdir(), 'hub-patroni-'));
  chown(dir);
  const taken = new Set<number>();
  const portas = {
    etcd: await freePort(taken),
    peer: await freePort(taken),
    rw: await freePort(taken),
    ro: await freePort(taken),
  };
  const etcdUrl = `http://127.0.0.1:${portas.etcd}`;
  const escopo = `hub-${path.basename(dir).slice(-6).toLowerCase()}`;
  const bin = pgBinDir();
  const membros: Membro[] = [];
  for (let i = 1; i <= quantos; i += 1) {
    const m = {
      nome: `n${i}`,
      dir: path.join(dir, `n${i}`),
      pgPort: await freePort(taken),
      restPort: await freePort(taken),
    };
    mkdirSync(m.dir, { mode: 0o700 });
    writeFileSync(path.join(m.dir, 'patroni.yml'), JSON.stringify(configDoMembro(m, escopo, etcdUrl, bin), null, 2));
    chown(m.dir);
    chown(path.join(m.dir, 'patroni.yml'));
    membros.push(m);
  }
  return { dir, dono, portas, etcdUrl, membros, env: { PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: dir } };
}

type Preparo = Awaited<ReturnType<typeof prepararDiretorio>>;

class ClusterPatroni implements PrivatePatroni {
  readonly url: string;
  readonly readUrl: string;
  readonly membros: string[];
  readonly portas: Record<string, number>;
  private readonly programas = programasDoPatroni();
  private readonly patronis = new Map<string, Processo>();
  private etcd?: Processo;
  private haproxy?: Processo;

  constructor(private readonly p: Preparo) {
    this.url = `postgresql://postgres@127.0.0.1:${p.portas.rw}/postgres`;
    this.readUrl = `postgresql://postgres@127.0.0.1:${p.portas.ro}/postgres`;
    this.membros = p.membros.map((m) => m.nome);
    this.portas = Object.fromEntries(p.membros.map((m) => [m.nome, m.pgPort]));
  }

  /** etcd, then the first member (it bootstraps), the others (they copy it), then HAProxy. */
  async iniciar(): Promise<void> {
    const { dir, etcdUrl, portas, env, membros, dono } = this.p;
    const peer = `http://127.0.0.1:${portas.peer}`;
    this.etcd = iniciar(
      this.programas.etcd,
      [
        ...['--name', 'e1', '--data-dir', path.join(dir, 'etcd'), '--listen-client-urls', etcdUrl],
        ...['--advertise-client-urls', etcdUrl, '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer],
        ...['--initial-cluster', `e1=${peer}`, '--log-level', 'warn'],
      ],
      { cwd: dir, env },
    );
    for (const m of membros) {
      const args = [path.join(m.dir, 'patroni.yml')];
      const p = iniciar(this.programas.patroni, args, { ...dono, cwd: m.dir, env: { ...env, HOME: m.dir } });
      this.patronis.set(m.nome, p);
      // The first bootstraps the cluster (a Patroni that exits meanwhile fails the start at once).
      if (m === membros[0])
        await Promise.race([
          this.primario(),
          p.exited.then(() => {
            throw new Error(`Patroni ${m.nome} exited`);
          }),
        ]);
    }
    await this.standbySincrono();
    await waitFor(
      async () => {
        const todos = await this.cluster();
        return todos.length === membros.length && todos.every((m) => m.state === 'running');
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'every Patroni member running' },
    );
    writeFileSync(path.join(dir, 'haproxy.cfg'), configDoHaproxy(membros, portas.rw, portas.ro));
    this.haproxy = iniciar(this.programas.haproxy, ['-f', path.join(dir, 'haproxy.cfg'), '-db'], { cwd: dir, env });
    // HAProxy takes every server for up until its checks say otherwise: wait until its ports lead where they should.
    await waitFor(
      async () => {
        const lider = this.portas[await this.primario()];
        const [escrita, leitura] = await Promise.all([servidorAtras(this.url), servidorAtras(this.readUrl)]);
        return escrita.porta === lider && !escrita.recuperando && leitura.recuperando;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: "HAProxy's ports on the primary and a standby" },
    );
  }

  async cluster(): Promise<MembroDoCluster[]> {
    for (const m of this.p.membros.filter((x) => this.running(x.nome))) {
      const resposta = await fetch(`http://127.0.0.1:${m.restPort}/cluster`, {
        signal: AbortSignal.timeout(2_000),
      }).catch(() => undefined);
      if (resposta?.ok) return ((await resposta.json()) as { members: MembroDoCluster[] }).members;
    }
    throw new Error('no Patroni member answers');
  }

  private comPapel(papel: string, what: string, outroQue?: string): Promise<string> {
    return waitFor<string | undefined>(
      async () =>
        (await this.cluster().catch(() => [])).find(
          (m) => m.role === papel && m.state === 'running' && m.name !== outroQue,
        )?.name,
      { timeoutMs: 60_000, intervalMs: 100, what },
    );
  }

  primario(outroQue?: string): Promise<string> {
    return this.comPapel('leader', 'a Patroni leader running', outroQue);
  }

  standbySincrono(outroQue?: string): Promise<string> {
    return this.comPapel('sync_standby', 'a synchronous standby running', outroQue);
  }

  running(nome: string): boolean {
    return this.patronis.get(nome)?.child !== undefined;
  }

  async kill(nome: string): Promise<void> {
    const m = this.p.membros.find((x) => x.nome === nome);
    if (!m) throw new Error(`no member ${nome}`);
    const p = this.patronis.get(nome);
    if (p?.child?.pid) sinal(p.child.pid, 'SIGKILL');
    await p?.exited;
    // The postmaster runs detached from Patroni: it and every backend by pid.
    const data = path.join(m.dir, 'data');
    for (const pid of processosDoPostgres(data)) sinal(pid, 'SIGKILL');
    await waitFor(() => processosDoPostgres(data).length === 0, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: `${nome}'s PostgreSQL gone`,
    });
  }

  async patronictl(args: string[]): Promise<string> {
    const config = path.join(this.p.membros[0]!.dir, 'patroni.yml');
    return (await run(this.programas.patronictl, ['-c', config, ...args], { env: this.p.env, timeout: 60_000 })).stdout;
  }

  async switchover(): Promise<{ de: string; para: string }> {
    const de = await this.primario();
    await this.patronictl(['switchover', '--force']);
    return { de, para: await this.primario(de) };
  }

  log(nome: string): string {
    const p = nome === 'haproxy' ? this.haproxy : nome === 'etcd' ? this.etcd : this.patronis.get(nome);
    return p?.output ?? '';
  }

  async close(): Promise<void> {
    for (const m of this.p.membros) await this.kill(m.nome).catch(() => undefined);
    for (const p of [this.haproxy, this.etcd]) {
      p?.child?.kill('SIGKILL');
      await p?.exited;
    }
    rmSync(this.p.dir, { recursive: true, force: true });
  }
}

/**
 * A PostgreSQL cluster that fails over, for the tests that lose a primary: one etcd, three
 * PostgreSQL members under Patroni, and HAProxy in front (read-write and read-only ports), all from
 * Debian's packages (patroni, etcd-server, haproxy) and the machine's PostgreSQL binaries, on free
 * ports of 127.0.0.1 with their data in a temporary directory; the machine's own PostgreSQL is never
 * touched. Patroni and PostgreSQL run as the `postgres` user when the test runs as root (PostgreSQL
 * refuses root). Resolves once a primary leads, a synchronous standby follows, and HAProxy's ports
 * reach them. Missing packages fail with the apt-get command, never a skip.
 */
export async function startPrivatePatroni(options: { membros?: number } = {}): Promise<PrivatePatroni> {
  programasDoPatroni(); // fails with the apt-get command before anything is made
  const cluster = new ClusterPatroni(await prepararDiretorio(options.membros ?? 3));
  try {
    await cluster.iniciar();
  } catch (error) {
    const logs = ['etcd', 'haproxy', ...cluster.membros].map((n) => `--- ${n} ---\n${cluster.log(n).slice(-3_000)}`);
    await cluster.close();
    throw new Error(`${(error as Error).message}\n${logs.join('\n')}`);
  }
  return cluster;
}
