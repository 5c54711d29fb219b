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
  const programas = programasDoPatroni();
  const bin = pgBinDir();
  const raiz = process.getuid?.() === 0;
  const uid = raiz ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()) : undefined;
  const gid = raiz ? Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()) : undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'hub-patroni-'));
  if (uid !== undefined && gid !== undefined) chownSync(dir, uid, gid);
  const taken = new Set<number>();
  const escopo = `hub-${path.basename(dir).slice(-6).toLowerCase()}`;
  const [etcdClient, etcdPeer, rw, ro] = [
    await freePort(taken),
    await freePort(taken),
    await freePort(taken),
    await freePort(taken),
  ];
  const etcdUrl = `http://127.0.0.1:${etcdClient}`;
  const membros: Membro[] = [];
  for (let i = 1; i <= (options.membros ?? 3); i += 1) {
    const m = {
      nome: `n${i}`,
      dir: path.join(dir, `n${i}`),
      pgPort: await freePort(taken),
      restPort: await freePort(taken),
    };
    mkdirSync(m.dir, { mode: 0o700 });
    writeFileSync(path.join(m.dir, 'patroni.yml'), JSON.stringify(configDoMembro(m, escopo, etcdUrl, bin), null, 2));
    if (uid !== undefined && gid !== undefined) {
      chownSync(m.dir, uid, gid);
      chownSync(path.join(m.dir, 'patroni.yml'), uid, gid);
    }
    membros.push(m);
  }
  const env = { PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: dir };
  const etcd = iniciar(
    programas.etcd,
    [
      ...['--name', 'e1', '--data-dir', path.join(dir, 'etcd'), '--listen-client-urls', etcdUrl],
      ...['--advertise-client-urls', etcdUrl, '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`],
      ...['--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`],
      ...['--initial-cluster', `e1=http://127.0.0.1:${etcdPeer}`, '--log-level', 'warn'],
    ],
    { cwd: dir, env },
  );
  const patronis = new Map<string, Processo>();
  let haproxy: Processo | undefined;
  const porNome = (nome: string) => {
    const m = membros.find((x) => x.nome === nome);
    if (!m) throw new Error(`no member ${nome}`);
    return m;
  };

  const cluster = async (): Promise<MembroDoCluster[]> => {
    for (const m of membros.filter((x) => patronis.get(x.nome)?.child)) {
      const resposta = await fetch(`http://127.0.0.1:${m.restPort}/cluster`, {
        signal: AbortSignal.timeout(2_000),
      }).catch(() => undefined);
      if (resposta?.ok) return ((await resposta.json()) as { members: MembroDoCluster[] }).members;
    }
    throw new Error('no Patroni member answers');
  };
  const comPapel =
    (papel: string, what: string) =>
    (outroQue?: string): Promise<string> =>
      waitFor<string | undefined>(
        async () => {
          const achado = (await cluster().catch(() => [])).find(
            (m) => m.role === papel && m.state === 'running' && m.name !== outroQue,
          );
          return achado?.name;
        },
        { timeoutMs: 60_000, intervalMs: 100, what },
      );
  const primario = comPapel('leader', 'a Patroni leader running');
  const standbySincrono = comPapel('sync_standby', 'a synchronous standby running');

  /** Rejects when a member's Patroni exits during the start. */
  const saiu = (nome: string) =>
    (patronis.get(nome)?.exited ?? Promise.resolve()).then(() => {
      throw new Error(`Patroni ${nome} exited`);
    });

  const kill = async (nome: string) => {
    const m = porNome(nome);
    const p = patronis.get(nome);
    if (p?.child?.pid) sinal(p.child.pid, 'SIGKILL');
    await p?.exited;
    // The postmaster runs detached from Patroni: it and every backend by pid.
    for (const pid of processosDoPostgres(path.join(m.dir, 'data'))) sinal(pid, 'SIGKILL');
    await waitFor(() => processosDoPostgres(path.join(m.dir, 'data')).length === 0, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: `${nome}'s PostgreSQL gone`,
    });
  };

  const close = async () => {
    for (const m of membros) await kill(m.nome).catch(() => undefined);
    for (const p of [haproxy, etcd]) {
      p?.child?.kill('SIGKILL');
      await p?.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const patronictl = async (args: string[]) =>
    (
      await run(programas.patronictl, ['-c', path.join(membros[0]!.dir, 'patroni.yml'), ...args], {
        env,
        timeout: 60_000,
      })
    ).stdout;

  try {
    for (const m of membros) {
      patronis.set(
        m.nome,
        iniciar(programas.patroni, [path.join(m.dir, 'patroni.yml')], {
          uid,
          gid,
          cwd: m.dir,
          env: { ...env, HOME: m.dir },
        }),
      );
      // The first bootstraps the cluster; the others wait for its leader and copy it.
      if (m === membros[0]) await Promise.race([primario(), saiu(m.nome)]);
    }
    await standbySincrono();
    await waitFor(
      async () => (await cluster()).every((m) => m.state === 'running') && (await cluster()).length === membros.length,
      {
        timeoutMs: 120_000,
        intervalMs: 200,
        what: 'every Patroni member running',
      },
    );
    writeFileSync(path.join(dir, 'haproxy.cfg'), configDoHaproxy(membros, rw, ro));
    haproxy = iniciar(programas.haproxy, ['-f', path.join(dir, 'haproxy.cfg'), '-db'], { cwd: dir, env });
  } catch (error) {
    const logs = [...patronis].map(([nome, p]) => `--- ${nome} ---\n${p.output.slice(-3_000)}`).join('\n');
    await close();
    throw new Error(`${(error as Error).message}\n--- etcd ---\n${etcd.output.slice(-2_000)}\n${logs}`);
  }
  const url = `postgresql://postgres@127.0.0.1:${rw}/postgres`;
  const readUrl = `postgresql://postgres@127.0.0.1:${ro}/postgres`;
  const portas = Object.fromEntries(membros.map((m) => [m.nome, m.pgPort]));
  // HAProxy takes every server for up until its checks say otherwise: wait until its ports lead where they should.
  await waitFor(
    async () => {
      const lider = portas[await primario()];
      const [escrita, leitura] = await Promise.all([servidorAtras(url), servidorAtras(readUrl)]);
      return escrita.porta === lider && !escrita.recuperando && leitura.recuperando;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: "HAProxy's ports on the primary and a standby" },
  ).catch(async (error: Error) => {
    const saida = haproxy?.output ?? '';
    await close();
    throw new Error(`${error.message}\n--- haproxy ---\n${saida}`);
  });

  return {
    url,
    readUrl,
    membros: membros.map((m) => m.nome),
    portas,
    cluster,
    primario,
    standbySincrono,
    running: (nome) => patronis.get(nome)?.child !== undefined,
    kill,
    patronictl,
    switchover: async () => {
      const de = await primario();
      await patronictl(['switchover', '--force']);
      return { de, para: await primario(de) };
    },
    log: (nome) =>
      (nome === 'haproxy' ? haproxy?.output : nome === 'etcd' ? etcd.output : patronis.get(nome)?.output) ?? '',
    close,
  };
}
