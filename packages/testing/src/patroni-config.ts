import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** What a Patroni cluster of the tests is made of; `startPrivatePatroni` fails with this when one is missing. */
export const PACOTES_DO_PATRONI = 'apt-get install -y patroni etcd-server haproxy';

/** The programs, found on PATH or in Debian's places; an error naming the apt-get command when one is missing. */
export function programasDoPatroni(): { patroni: string; patronictl: string; etcd: string; haproxy: string } {
  const achar = (nome: string, ...lugares: string[]) => {
    for (const lugar of lugares) if (existsSync(lugar)) return lugar;
    try {
      return execFileSync('which', [nome], { encoding: 'utf8' }).trim();
    } catch {
      return undefined;
    }
  };
  const programas = {
    patroni: achar('patroni', '/usr/bin/patroni'),
    patronictl: achar('patronictl', '/usr/bin/patronictl'),
    etcd: achar('etcd', '/usr/bin/etcd'),
    haproxy: achar('haproxy', '/usr/sbin/haproxy'),
  };
  const faltam = Object.entries(programas).filter(([, lugar]) => !lugar);
  if (faltam.length)
    throw new Error(
      `A Patroni cluster for the tests needs ${faltam.map(([nome]) => nome).join(', ')}: run \`${PACOTES_DO_PATRONI}\``,
    );
  return programas as { patroni: string; patronictl: string; etcd: string; haproxy: string };
}

/** The machine's PostgreSQL binaries (PG_BINDIR, pg_config, or the newest /usr/lib/postgresql/<ver>/bin). */
export function pgBinDir(): string {
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

export interface Membro {
  nome: string;
  dir: string;
  pgPort: number;
  restPort: number;
}

/**
 * Patroni's settings for one member (YAML is a superset of JSON, so it is written as JSON). The DCS
 * part (`bootstrap.dcs`) is what the first member writes into etcd for the whole cluster: ttl 10 s
 * (the leader key expires 10 s after the primary's Patroni last renewed it), a loop every second,
 * etcd retried for 3 s, and `synchronous_mode: true` (one synchronous standby: a commit acknowledged
 * is on two nodes, and only that standby may be promoted). fsync off as in startPrivatePostgres
 * (processes are killed, never the machine).
 */
export function configDoMembro(m: Membro, escopo: string, etcdUrl: string, bin: string) {
  return {
    scope: escopo,
    name: m.nome,
    log: { level: 'INFO' },
    restapi: { listen: `127.0.0.1:${m.restPort}`, connect_address: `127.0.0.1:${m.restPort}` },
    etcd3: { hosts: etcdUrl.replace(/^http:\/\//, '') },
    bootstrap: {
      dcs: {
        ttl: 10,
        loop_wait: 1,
        retry_timeout: 3,
        maximum_lag_on_failover: 1_048_576,
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: false,
          parameters: {
            max_connections: 300,
            fsync: 'off',
            full_page_writes: 'off',
            shared_buffers: '32MB',
            wal_keep_size: '256MB',
          },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { auth: 'trust' }],
      pg_hba: [
        'local all all trust',
        'local replication all trust',
        'host all all 127.0.0.1/32 trust',
        'host replication all 127.0.0.1/32 trust',
      ],
    },
    postgresql: {
      listen: `127.0.0.1:${m.pgPort}`,
      connect_address: `127.0.0.1:${m.pgPort}`,
      data_dir: path.join(m.dir, 'data'),
      bin_dir: bin,
      pgpass: path.join(m.dir, 'pgpass'),
      authentication: { superuser: { username: 'postgres' }, replication: { username: 'postgres' } },
      parameters: { unix_socket_directories: m.dir },
    },
  };
}

/**
 * HAProxy in front of the members: a read-write port sent to the one member whose Patroni answers
 * 200 on `/primary`; a read-only port balanced over the members answering 200 on `/replica`, and
 * sent to the primary while no replica answers (the replica-lost and two-member cases: reads go on,
 * only slower). Checked every second, down after 2 failures, up after 1; a member marked down has its
 * sessions shut, so no client stays connected to a former primary.
 */
export function configDoHaproxy(membros: Membro[], rw: number, ro: number): string {
  const servidores = membros.map((m) => `    server ${m.nome} 127.0.0.1:${m.pgPort} check port ${m.restPort}`);
  const backend = (nome: string, caminho: string, extra: string[] = []) => [
    `backend ${nome}`,
    ...extra,
    `    option httpchk GET ${caminho}`,
    '    http-check expect status 200',
    '    default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions',
    ...servidores,
  ];
  return [
    'global',
    '    maxconn 2000',
    'defaults',
    '    mode tcp',
    '    timeout connect 2s',
    '    timeout client 30m',
    '    timeout server 30m',
    '    timeout check 1s',
    'frontend rw',
    `    bind 127.0.0.1:${rw}`,
    '    default_backend primario',
    'frontend ro',
    `    bind 127.0.0.1:${ro}`,
    '    use_backend replicas if { nbsrv(replicas) gt 0 }',
    '    default_backend primario',
    ...backend('primario', '/primary'),
    ...backend('replicas', '/replica', ['    balance roundrobin']),
    '',
  ].join('\n');
}
