// PostgreSQL's work per delivery (issue 19), for each row of bench/floor/compare.ts: the WAL the row's
// own databases wrote and the index entries it inserted, per delivery, for the floor and the platform
// alike.
//
// The server is shared (other sessions' tests write WAL all the time) and pg_stat_wal is cluster-wide,
// so the WAL is read, not only counted: pg_walinspect decodes every record written during the row
// (from the LSN at its start to the flushed LSN once it has settled) and keeps those that touch a block
// of the row's databases (`rel <tablespace>/<database oid>/<relfilenode>`), plus the commit records of
// the same transactions (they name no block). From the same records: index entries (B-tree leaf
// inserts, INSERT_LEAF and INSERT_POST: what a partial index skipped is not there) and the bytes per
// relation. Beside them, the estimate the issue asks for: pg_stat_user_tables of each database
// (inserts and non-HOT updates, each writing one entry in every index of its table, partial ones
// counted as written; HOT updates and deletes write none). pg_walinspect lives in a scratch database
// of this run (dropped by close()); the role must be a superuser (the local `postgres` is).
//
// A busy server recycles WAL segments within seconds of a checkpoint, before the row's records are
// read back. So each row holds a TEMPORARY physical replication slot from its start until its WAL is
// read: the server keeps the WAL from there, and drops the slot by itself if this process dies (a
// temporary slot lives as long as its session), so nothing is retained for ever.
import { createRequire } from 'node:module';
import path from 'node:path';

const ADMIN_URL = process.env.DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
/**
 * Settled: fewer than POUCAS rows written in the databases over QUIETO_MS (an idle backend reports its
 * counters up to 10 s late; the platform's own background writes are a few rows a second), or
 * SETTLE_MAX_MS in all.
 */
const QUIETO_MS = 11_000;
const POUCAS = 50;
const SETTLE_MAX_MS = 60_000;

interface PgClient {
  connect(): Promise<void>;
  query<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
  end(): Promise<void>;
}
const { Client } = createRequire(path.resolve(__dirname, '../../packages/database/package.json'))('pg') as {
  Client: new (options: { connectionString: string }) => PgClient;
};

const urlDe = (database: string) => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
};

async function conectar(database: string): Promise<PgClient> {
  const client = new Client({ connectionString: urlDe(database) });
  await client.connect();
  return client;
}

/** Writes of one table since the server started: pg_stat_user_tables, and its index count. */
interface Tabela {
  ins: number;
  upd: number;
  hot: number;
  del: number;
  indices: number;
}
type Tabelas = Map<string, Tabela>;

export interface Marco {
  lsn: string;
  walDoCluster: number;
  /** database → table → counters */
  bancos: Map<string, Tabelas>;
}

export interface TrabalhoPg {
  entregas: number;
  /** WAL of the row's databases (their blocks and their transactions' commits), bytes per delivery. */
  walPorEntrega: number;
  /** The same without full-page images (which depend on when the last checkpoint was). */
  walSemFpiPorEntrega: number;
  /** pg_stat_wal's delta, the whole cluster (other sessions included), bytes per delivery. */
  walDoClusterPorEntrega: number;
  /** B-tree leaf inserts in the row's databases, per delivery (exact, from the WAL). */
  indicesPorEntrega: number;
  /** (inserts + non-HOT updates) × the table's indexes, per delivery (pg_stat_user_tables; partial indexes counted). */
  indicesEstimadosPorEntrega: number;
  /** Heap rows written (inserted, updated, deleted) per delivery, and the share of updates that were HOT. */
  linhasPorEntrega: number;
  hot: number;
  /** "entrega 120 B (3.0 rows: 1.0 ins, 2.0 upd, 0 % HOT; 23.9 index entries), …" */
  porTabela: string;
  /** Per relation and record type: records per delivery × their mean size (BENCH_PG_DETALHE=1 logs it). */
  porRegistro: string;
  /** The largest relations by WAL bytes per delivery. */
  porRelacao: string;
}

const contadores = `
  select t.relname as tabela, t.n_tup_ins::float8 as ins, t.n_tup_upd::float8 as upd, t.n_tup_hot_upd::float8 as hot,
         t.n_tup_del::float8 as del, (select count(*) from pg_index i where i.indrelid = t.relid)::int as indices
    from pg_stat_user_tables t`;

/** Every relation of a database by filenode, for naming the WAL's blocks (an index or TOAST under its table). */
const RELACOES = `
  select pg_relation_filenode(c.oid)::text as filenode,
         case when c.relkind = 'i' then (select t.relname from pg_index i join pg_class t on t.oid = i.indrelid
                                          where i.indexrelid = c.oid) || ' / ' || c.relname
              when n.nspname = 'pg_toast' then coalesce((select t.relname from pg_class t where t.reltoastrelid = c.oid),
                                                        (select t.relname || ' / ' || c.relname from pg_index i
                                                           join pg_class x on x.oid = i.indrelid
                                                           join pg_class t on t.reltoastrelid = x.oid
                                                          where i.indexrelid = c.oid)) || ' (toast)'
              else c.relname end as nome
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where pg_relation_filenode(c.oid) is not null`;

/**
 * The WAL records of [de, ate) that are the databases' (`oids`): per relation (filenode and database),
 * bytes, bytes without full-page images, and B-tree leaf inserts; plus their transactions' commits.
 */
const WAL_DOS_BANCOS = `
  with r as (
    select xid, resource_manager, record_type, record_length, fpi_length,
           substring(block_ref from 'rel \\d+/(\\d+)/\\d+') as banco,
           substring(block_ref from 'rel \\d+/\\d+/(\\d+)') as filenode
      from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
  ), deles as (
    select distinct xid from r where banco = any($3::text[]) and xid <> 0
  )
  select banco, filenode, resource_manager || '/' || record_type as tipo, count(*)::float8 as registros,
         sum(record_length)::float8 as bytes, sum(record_length - fpi_length)::float8 as sem_fpi,
         (count(*) filter (where resource_manager = 'Btree' and record_type in ('INSERT_LEAF', 'INSERT_POST')))::float8 as indices
    from r
   where banco = any($3::text[])
      or (banco is null and resource_manager = 'Transaction' and xid in (select xid from deles))
   group by 1, 2, 3`;

/** The databases whose names start with `prefix` (a platform's, started by the benchmark). */
export async function databasesLike(prefix: string): Promise<string[]> {
  const admin = await conectar(new URL(ADMIN_URL).pathname.slice(1) || 'postgres');
  try {
    const { rows } = await admin.query<{ datname: string }>(
      'select datname from pg_database where starts_with(datname, $1) order by 1',
      [prefix],
    );
    return rows.map((r) => r.datname);
  } finally {
    await admin.end();
  }
}

export interface MedidorPg {
  marcar(bancos: string[]): Promise<Marco>;
  /**
   * Waits until the row's writes have settled (every delivery recorded, the counters reported), then
   * gives its work per delivery.
   */
  medir(antes: Marco, entregas: number): Promise<TrabalhoPg>;
  close(): Promise<void>;
}

export async function medidorPg(): Promise<MedidorPg | undefined> {
  const scratch = `hub_pgtrabalho_${process.pid}`;
  const admin = await conectar(new URL(ADMIN_URL).pathname.slice(1) || 'postgres');
  let inspector: PgClient;
  try {
    await admin.query(`drop database if exists ${scratch} with (force)`);
    await admin.query(`create database ${scratch}`);
    inspector = await conectar(scratch);
    await inspector.query('create extension pg_walinspect');
  } catch (error) {
    process.stderr.write(`note: PostgreSQL's work per delivery is not measured: ${(error as Error).message}\n`);
    await admin.query(`drop database if exists ${scratch} with (force)`).catch(() => undefined);
    await admin.end();
    return undefined;
  }

  async function tabelas(banco: string): Promise<Tabelas> {
    const client = await conectar(banco);
    try {
      const { rows } = await client.query<Tabela & { tabela: string }>(contadores);
      return new Map(rows.map(({ tabela, ...t }) => [tabela, t]));
    } finally {
      await client.end();
    }
  }

  const slot = `${scratch}_slot`;
  async function marcar(bancos: string[]): Promise<Marco> {
    await assentar(bancos);
    // The slot keeps the WAL from its restart_lsn, taken at its creation: before the row's start.
    await inspector.query('select pg_create_physical_replication_slot($1, true, true)', [slot]);
    const [{ lsn, wal }] = (
      await inspector.query<{ lsn: string; wal: number }>(
        'select pg_current_wal_insert_lsn()::text as lsn, (select wal_bytes::float8 from pg_stat_wal) as wal',
      )
    ).rows as [{ lsn: string; wal: number }];
    return { lsn, walDoCluster: wal, bancos: await lerTodas(bancos) };
  }

  /** Per table, what changed between two marks. */
  const diferenca = (antes: Tabelas, depois: Tabelas) =>
    [...depois].map(([nome, d]) => {
      const a = antes.get(nome) ?? { ins: 0, upd: 0, hot: 0, del: 0, indices: d.indices };
      return {
        nome,
        ins: d.ins - a.ins,
        upd: d.upd - a.upd,
        hot: d.hot - a.hot,
        del: d.del - a.del,
        indices: d.indices,
      };
    });

  const lerTodas = async (bancos: string[]) => {
    const mapa = new Map<string, Tabelas>();
    for (const banco of bancos) mapa.set(banco, await tabelas(banco));
    return mapa;
  };
  const escritas = (antes: Map<string, Tabelas>, depois: Map<string, Tabelas>) => {
    let soma = 0;
    for (const [banco, d] of depois)
      for (const t of diferenca(antes.get(banco) ?? new Map(), d)) soma += t.ins + t.upd + t.del;
    return soma;
  };

  /** Waits until the databases are settled (what an earlier row or a warm-up wrote is all reported); gives their counters. */
  async function assentar(bancos: string[]): Promise<Map<string, Tabelas>> {
    const inicio = Date.now();
    let base = await lerTodas(bancos);
    let desde = Date.now();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const agora = await lerTodas(bancos);
      if (escritas(base, agora) >= POUCAS) {
        base = agora;
        desde = Date.now();
      }
      if (Date.now() - desde >= QUIETO_MS || Date.now() - inicio >= SETTLE_MAX_MS) return agora;
    }
  }

  async function medir(antes: Marco, entregas: number): Promise<TrabalhoPg> {
    try {
      return await medirRetendo(antes, entregas);
    } finally {
      await inspector.query('select pg_drop_replication_slot($1)', [slot]).catch(() => undefined);
    }
  }

  async function medirRetendo(antes: Marco, entregas: number): Promise<TrabalhoPg> {
    const bancos = [...antes.bancos.keys()];
    const agora = await assentar(bancos);
    const [{ ate, wal }] = (
      await inspector.query<{ ate: string; wal: number }>(
        'select pg_current_wal_flush_lsn()::text as ate, (select wal_bytes::float8 from pg_stat_wal) as wal',
      )
    ).rows as [{ ate: string; wal: number }];
    const oids = new Map(
      (
        await inspector.query<{ oid: string; datname: string }>(
          'select oid::text, datname from pg_database where datname = any($1::text[])',
          [bancos],
        )
      ).rows.map((r) => [r.oid, r.datname]),
    );
    const registros = (
      await inspector.query<{
        banco: string | null;
        filenode: string | null;
        tipo: string;
        registros: number;
        bytes: number;
        sem_fpi: number;
        indices: number;
      }>(WAL_DOS_BANCOS, [antes.lsn, ate, [...oids.keys()]])
    ).rows;
    const nomes = new Map<string, string>();
    // Several databases (a platform's): each relation under its database's name less their common prefix.
    const comum = bancos.reduce((p, b) => {
      let i = 0;
      while (i < p.length && p[i] === b[i]) i++;
      return p.slice(0, i);
    });
    for (const [oid, banco] of oids) {
      const client = await conectar(banco);
      try {
        for (const r of (await client.query<{ filenode: string; nome: string }>(RELACOES)).rows)
          nomes.set(`${oid}/${r.filenode}`, bancos.length > 1 ? `${banco.slice(comum.length)}.${r.nome}` : r.nome);
      } finally {
        await client.end();
      }
    }
    const n = Math.max(1, entregas);
    const somar = (f: (r: (typeof registros)[number]) => number) => registros.reduce((s, r) => s + f(r), 0);
    const porRelacao = new Map<string, number>();
    const porRegistro = new Map<string, [number, number]>();
    for (const r of registros) {
      const nome = r.banco ? (nomes.get(`${r.banco}/${r.filenode}`) ?? `relation ${r.filenode}`) : 'commit records';
      porRelacao.set(nome, (porRelacao.get(nome) ?? 0) + r.bytes);
      const chave = `${nome} ${r.tipo}`;
      const [n0, b0] = porRegistro.get(chave) ?? [0, 0];
      porRegistro.set(chave, [n0 + r.registros, b0 + r.bytes]);
    }
    let estimadas = 0;
    let linhas = 0;
    let atualizadas = 0;
    let quentes = 0;
    const porTabela: string[] = [];
    for (const banco of bancos)
      for (const t of diferenca(antes.bancos.get(banco) ?? new Map(), agora.get(banco) ?? new Map())) {
        const escritas = t.ins + t.upd + t.del;
        if (escritas === 0) continue;
        const indices = (t.ins + t.upd - t.hot) * t.indices;
        estimadas += indices;
        linhas += escritas;
        atualizadas += t.upd;
        quentes += t.hot;
        if (escritas >= n / 100)
          porTabela.push(
            `${t.nome} ${(escritas / n).toFixed(2)} rows (ins ${(t.ins / n).toFixed(2)}, upd ${(t.upd / n).toFixed(2)}` +
              `${t.upd > 0 ? ` ${((100 * t.hot) / t.upd).toFixed(0)} % HOT` : ''}, del ${(t.del / n).toFixed(2)}; ` +
              `${t.indices} indexes, ${(indices / n).toFixed(1)} entries)`,
          );
      }
    return {
      entregas,
      walPorEntrega: somar((r) => r.bytes) / n,
      walSemFpiPorEntrega: somar((r) => r.sem_fpi) / n,
      walDoClusterPorEntrega: (wal - antes.walDoCluster) / n,
      indicesPorEntrega: somar((r) => r.indices) / n,
      indicesEstimadosPorEntrega: estimadas / n,
      linhasPorEntrega: linhas / n,
      hot: atualizadas > 0 ? quentes / atualizadas : 0,
      porTabela: porTabela.join('; '),
      porRegistro: [...porRegistro]
        .sort((a, b) => b[1][1] - a[1][1])
        .filter(([, [, bytes]]) => bytes / n >= 5)
        .map(([nome, [k, bytes]]) => `${nome}: ${(k / n).toFixed(2)} × ${(bytes / k).toFixed(0)} B`)
        .join('\n'),
      porRelacao: [...porRelacao]
        .sort((a, b) => b[1] - a[1])
        .filter(([, bytes]) => bytes / n >= 10)
        .map(([nome, bytes]) => `${nome} ${(bytes / n).toFixed(0)} B`)
        .join(', '),
    };
  }

  return {
    marcar,
    medir,
    async close() {
      await inspector.end();
      await admin.query(`drop database if exists ${scratch} with (force)`);
      await admin.end();
    },
  };
}
