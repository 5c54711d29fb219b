/**
 * Benchmark of the panel's reads of events (issue 8): GET /evento (first and a deep page), every
 * filter of GET /evento/filtro and GET /evento/resumo against hub-api on a scratch database of
 * 1,000,000 events and 3,000,000 deliveries, spread over 30 days (SQL generate_series), with the
 * EXPLAIN (ANALYZE) plans of the queries the routes run.
 *
 * Run from the root: npx tsx bench/reads/event-lists.ts [--manter]
 * The database (hub_leitura_bench) is dropped at the end unless --manter is given; a kept one is
 * reused by the next run (seeding takes minutes). Writes its section of docs/benchmarks.md.
 * BENCH_ONLY=resumo measures GET /evento/resumo alone (and its plans) and only prints them: the
 * section is left as it is (a run that changes the summary records its figures in the history).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { withDatabase } from '../../packages/database/src';
import { createLogger } from '../../packages/log/src';
import { startTestIdentity } from '../../packages/testing/src';
import { startAccessForTests } from '../../services/access/src/access.test-support';
import { hubApiConfig } from '../../services/hub-api/src/config';
import { sqlDaPagina, sqlDoFiltro } from '../../services/hub-api/src/features/eventos/eventos.repository';
import {
  EVENTO_TOTAL,
  RESUMO_ATIVOS,
  RESUMO_FILA,
  RESUMO_LATENCIAS_POR_HORA,
  RESUMO_POR_HORA,
} from '../../services/hub-api/src/features/eventos/resumo.sql';
import { startHubApi } from '../../services/hub-api/src/start';
import { type PgClient, pg, semearLeituras, TIPOS } from '../support/seed-large-tables';
import { percentile } from '../support/paced-load';

process.env.LOG_LEVEL ??= 'warn';

const EVENTOS = 1_000_000;
const AMOSTRAS = 300;
const AQUECIMENTO = 30;
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DATABASE = 'hub_leitura_bench';
const HEADING = '## Panel reads of events';
const manter = process.argv.includes('--manter');
const somenteResumo = process.env.BENCH_ONLY === 'resumo';
if (process.env.BENCH_ONLY && !somenteResumo)
  throw new Error(`BENCH_ONLY is resumo or unset, not ${process.env.BENCH_ONLY}`);
const log = (message: string) => process.stderr.write(`${message}\n`);

/** Closed loop, one request at a time: the latency a panel user sees on an otherwise idle hub. */
async function medir(url: string, token: string) {
  const uma = async () => {
    const t = performance.now();
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    return performance.now() - t;
  };
  for (let i = 0; i < AQUECIMENTO; i++) await uma();
  const tempos: number[] = [];
  for (let i = 0; i < AMOSTRAS; i++) tempos.push(await uma());
  tempos.sort((a, b) => a - b);
  return { p50: percentile(tempos, 50), p99: percentile(tempos, 99), max: tempos[tempos.length - 1] ?? Number.NaN };
}

/** A statement and its values: a Prisma.Sql, or a declared statement's text and values. */
type Consulta = { text: string; values: unknown[] };

async function plano(client: PgClient, sql: Consulta): Promise<string> {
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(
    `explain (analyze, buffers, costs off, timing on) ${sql.text}`,
    sql.values,
  );
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

async function main() {
  const loadBefore = loadavg()[0] ?? 0;
  const admin = await pg(ADMIN_URL);
  const exists = (await admin.query('select 1 from pg_database where datname = $1', [DATABASE])).rows.length > 0;
  if (!exists) await admin.query(`create database ${DATABASE}`);
  await admin.end();
  const databaseUrl = withDatabase(ADMIN_URL, DATABASE);

  const identity = await startTestIdentity();
  const access = await startAccessForTests(identity);
  const keysDir = await mkdtemp(path.join(tmpdir(), 'bench-leitura-'));
  const vhost = process.env.HUB_TEST_VHOST;
  const hub = await startHubApi(
    hubApiConfig.parse({
      ...identity.env,
      HUB_DATABASE_URL: databaseUrl,
      ACCESS_URL: access.url,
      HUB_SIGNING_KEYS_FILE: path.join(keysDir, 'keys.json'),
      ...(vhost ? { RABBITMQ_URL: `amqp://guest:guest@127.0.0.1:5672/${vhost}` } : {}),
    }),
    createLogger('hub-api', 'warn'),
    { port: 0 },
  );
  const client = await pg(databaseUrl);
  try {
    await semearLeituras(client, EVENTOS, log);
    const token = await access.userWith(`leitor.bench@${access.companyDomain}`, { monitoramento: { ler: true } });
    const meio = (
      await client.query<{ id: string; tipo: string; app: string; entidade: string; recebido: Date }>(
        `select id::text, tipo_de_evento_id::text as tipo, aplicativo_publicador_id::text as app, entidade_id as entidade,
                recebido_em as recebido
           from evento order by recebido_em desc offset ${EVENTOS / 2} limit 1`,
      )
    ).rows[0];
    if (!meio) throw new Error('no events');
    const hora = 3_600_000;
    const agora = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    const diaAntes = meio.recebido.getTime();
    const casos: { rota: string; query: string; sql?: Consulta }[] = [
      { rota: 'GET /evento', query: '?pagina=1', sql: sqlDaPagina({ pagina: 1, tamanho: 10 }) },
      { rota: 'GET /evento', query: '?pagina=50000', sql: sqlDaPagina({ pagina: 50_000, tamanho: 10 }) },
      { rota: 'GET /evento/filtro', query: `?id=${meio.id}`, sql: sqlDoFiltro({ id: meio.id }) },
      {
        rota: 'GET /evento/filtro',
        query: `?tipo_de_evento_id=${meio.tipo}`,
        sql: sqlDoFiltro({ tipo_de_evento_id: meio.tipo }),
      },
      {
        rota: 'GET /evento/filtro',
        query: `?aplicativo_publicador_id=${meio.app}`,
        sql: sqlDoFiltro({ aplicativo_publicador_id: meio.app }),
      },
      {
        rota: 'GET /evento/filtro',
        query: `?entidade_id=${meio.entidade}`,
        sql: sqlDoFiltro({ entidade_id: meio.entidade }),
      },
      {
        rota: 'GET /evento/filtro',
        query: `?desde=${iso(agora - hora)}`,
        sql: sqlDoFiltro({ desde: new Date(agora - hora) }),
      },
      {
        rota: 'GET /evento/filtro',
        query: `?ate=${iso(diaAntes)}`,
        sql: sqlDoFiltro({ ate: new Date(diaAntes) }),
      },
      {
        rota: 'GET /evento/filtro',
        query: `?tipo_de_evento_id=${meio.tipo}&desde=${iso(diaAntes - 24 * hora)}&ate=${iso(diaAntes)}`,
        sql: sqlDoFiltro({
          tipo_de_evento_id: meio.tipo,
          desde: new Date(diaAntes - 24 * hora),
          ate: new Date(diaAntes),
        }),
      },
      {
        rota: 'GET /evento/filtro',
        query: `?aplicativo_publicador_id=${meio.app}&entidade_id=${meio.entidade}`,
        sql: sqlDoFiltro({ aplicativo_publicador_id: meio.app, entidade_id: meio.entidade }),
      },
      { rota: 'GET /evento/resumo', query: '' },
    ];
    const linhas: string[] = [];
    for (const caso of somenteResumo ? casos.filter((c) => c.rota === 'GET /evento/resumo') : casos) {
      const r = await medir(`${hub.url}${caso.rota.slice(4)}${caso.query}`, token);
      const linha = `| ${caso.rota} | \`${caso.query.replace(/[0-9a-f-]{36}/g, '{uuid}').replace(/\d{4}-[\dT:.-]+Z/g, '{t}')}\` | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} |`;
      linhas.push(linha);
      log(linha);
    }

    const dia = [new Date(agora - 23 * hora), new Date(agora)];
    const planos: [string, Consulta][] = [
      ['GET /evento?pagina=50000: the page', sqlDaPagina({ pagina: 50_000, tamanho: 10 })],
      ['GET /evento: total', { text: EVENTO_TOTAL.text, values: [] }],
      ...casos.slice(2, 10).map((c) => [`GET /evento/filtro${c.query}`, c.sql as Consulta] as [string, Consulta]),
      ['GET /evento/resumo: por_hora', { text: RESUMO_POR_HORA.text, values: dia }],
      ['GET /evento/resumo: latencies', { text: RESUMO_LATENCIAS_POR_HORA.text, values: dia }],
      ['GET /evento/resumo: the queue', { text: RESUMO_FILA.text, values: [] }],
      ['GET /evento/resumo: active registrations', { text: RESUMO_ATIVOS.text, values: [] }],
    ];
    const textos: string[] = [];
    for (const [titulo, sql] of somenteResumo ? planos.filter(([t]) => t.startsWith('GET /evento/resumo')) : planos) {
      textos.push(
        `${titulo.replace(/[0-9a-f-]{36}/g, '{uuid}').replace(/\d{4}-[\dT:.-]+Z/g, '{t}')}:`,
        '',
        '```',
        await plano(client, sql),
        '```',
        '',
      );
    }
    const [{ eventos, entregas }] = (
      await client.query<{ eventos: number; entregas: number }>(
        'select (select count(*) from evento)::int as eventos, (select count(*) from entrega)::int as entregas',
      )
    ).rows as [{ eventos: number; entregas: number }];
    const secao = [
      HEADING,
      '',
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.trim()}, ` +
        `Node ${process.version}, PostgreSQL 15 with its default settings (shared_buffers 128 MB), loopback; load average ` +
        `before the run ${loadBefore.toFixed(2)}, after ${(loadavg()[0] ?? 0).toFixed(2)} (other sessions share the 2 CPUs).`,
      '',
      '```',
      'npx tsx bench/reads/event-lists.ts',
      '```',
      '',
      `Data: ${eventos.toLocaleString('en')} events of ${TIPOS} types over 30 days, ${entregas.toLocaleString('en')} deliveries ` +
        '(3 subscriptions per type; the last 10 minutes still in the queue, 2–5 % of older ones retrying, in the error ' +
        'queue or cancelled), hourly tallies of the last 48 h with latency histograms as dense as they get (60 buckets an hour, in 16 slices for the last two hours, folded into one before), the stored events of every hour (resumo_por_hora.eventos_guardados, ' +
        'written by the triggers of migration 005 as the events are inserted), 10,000 refused events; made with generate_series, then ' +
        '`VACUUM (ANALYZE)`. hub-api runs in the benchmark process; each row is ' +
        `${AMOSTRAS} requests one after another (after ${AQUECIMENTO} to warm up) with a real user token ` +
        '(monitoramento.ler), so the figures are the latency of one panel user, HTTP and permission check included.',
      '',
      '| route | query | p50 ms | p99 ms | max ms |',
      '|---|---|---:|---:|---:|',
      ...linhas,
      '',
      'Plans (EXPLAIN (ANALYZE, BUFFERS) of the SQL the routes run, from the repositories; the delivery counters of a ' +
        'page are one grouped query over entrega_evento_criada for its ids):',
      '',
      ...textos,
    ].join('\n');
    if (somenteResumo) {
      log(['', ...linhas, '', ...textos].join('\n'));
      return;
    }
    const arquivo = path.resolve(__dirname, '../../docs/benchmarks.md');
    const texto = await readFile(arquivo, 'utf8');
    const inicio = texto.indexOf(`${HEADING}\n`);
    const fim = inicio === -1 ? -1 : texto.indexOf('\n## ', inicio + HEADING.length);
    const novo =
      inicio === -1
        ? `${texto.trimEnd()}\n\n${secao}`
        : `${texto.slice(0, inicio)}${secao}${fim === -1 ? '' : `\n${texto.slice(fim + 1)}`}`;
    await writeFile(arquivo, `${novo.trimEnd()}\n`);
    log(`section "${HEADING}" written to docs/benchmarks.md`);
  } finally {
    await client.end();
    await hub.stop();
    await access.close();
    await identity.close();
    await rm(keysDir, { recursive: true, force: true });
    if (!manter) {
      const limpar = await pg(ADMIN_URL);
      await limpar.query(`drop database if exists ${DATABASE} with (force)`);
      await limpar.end();
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
