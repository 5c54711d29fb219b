import pg from 'pg';
import { SqlPool } from './sql';

const URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** The shape of the worker's claim: rows reached by key, on a table that has grown since it was planned. */
const REIVINDICAR = `update plano_t set situacao = 'em_andamento' where id = any($1::uuid[]) and situacao = 'pendente' returning id`;
const CRIAR = `create temp table plano_t (id uuid primary key default gen_random_uuid(), situacao text not null default 'pendente', resto text default repeat('x', 300)) with (fillfactor = 50)`;

type Consultar = (nome: string, texto: string, valores?: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * Plans the claim on a table of 20 rows (a temporary table: autovacuum never analyzes it), lets the
 * session reach its generic plan, grows the table to 20,000 rows and returns the plan it now runs.
 */
async function planoDepoisDeCrescer(consultar: Consultar): Promise<string> {
  await consultar('plano_criar', CRIAR);
  await consultar('plano_semear', 'insert into plano_t select from generate_series(1, $1::int)', [20]);
  await consultar('plano_analisar', 'analyze plano_t');
  for (let i = 0; i < 8; i += 1) await consultar('plano_reivindicar', REIVINDICAR, [[crypto.randomUUID()]]);
  await consultar('plano_semear', 'insert into plano_t select from generate_series(1, $1::int)', [20_000]);
  const linhas = await consultar(
    'plano_ver',
    `explain (format text) execute plano_reivindicar('{${crypto.randomUUID()}}')`,
  );
  return linhas.map((l) => String(l['QUERY PLAN'])).join('\n');
}

test('When the table a hot statement was planned on grows 1,000 times, then its connection still reaches the rows by index, where a plain connection scans the table', async () => {
  const pool = new SqlPool(URL, 1);
  const simples = new pg.Client({ connectionString: URL });
  await simples.connect();
  try {
    const peloPool = await planoDepoisDeCrescer((nome, texto, valores = []) => pool.consultar(nome, texto, valores));
    const peloCliente = await planoDepoisDeCrescer(
      async (nome, texto, valores = []) => (await simples.query({ name: nome, text: texto, values: valores })).rows,
    );
    expect(peloPool).toMatch(/Index Scan|Bitmap Index Scan/);
    expect(peloPool).not.toMatch(/Seq Scan/);
    // The hazard itself, on a connection without the setting: the plan made on 20 rows is kept.
    expect(peloCliente).toMatch(/Seq Scan/);
  } finally {
    await simples.end();
    await pool.fechar();
  }
});
