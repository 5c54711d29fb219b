/**
 * Benchmark of the delivery routes and of reprocessing (issue 9): GET /entrega (first and a deep
 * page, each filter), GET /entrega/filtro, GET /entrega/{id}, the same for their attempts
 * (GET /tentativa, /tentativa/filtro, /tentativa/{id}), then the error queue: a
 * reconciliation pass that republishes every delivery in fila_de_erro (the seed has no messages),
 * a reprocessing request of all of them (batches of HUB_REPROCESSAMENTO_LOTE, jobs through the
 * outbox), and the pass that follows it, emptying the error queue. Data: 1,000,000 events and
 * 3,000,000 deliveries over 30 days (the seed of bench/reads/event-lists.ts,
 * bench/support/seed-large-tables.ts), with their attempts (about 3.7 million).
 *
 * Run from the root: npx tsx bench/reads/delivery-lists.ts [--manter]
 * Uses a RabbitMQ virtual host of its own (made and deleted with rabbitmqctl) and a scratch
 * database (hub_entregas_bench, or BENCH_DATABASE: two runs on a shared server need two names;
 * dropped at the end unless --manter). Writes its section of docs/benchmarks.md.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { withDatabase } from '../../packages/database/src';
import { createLogger } from '../../packages/log/src';
import { startTestIdentity } from '../../packages/testing/src';
import { startAccessForTests } from '../../services/access/src/access.test-support';
import { hubApiConfig } from '../../services/hub-api/src/config';
import type { Prisma } from '../../packages/hub-data/src';
import { sqlDaPagina, sqlDoFiltro, sqlDoTotal } from '../../services/hub-api/src/features/entregas/entregas.repository';
import {
  sqlDoFiltro as filtroDeTentativas,
  sqlDaPagina as paginaDeTentativas,
  sqlDoTotal as totalDeTentativas,
} from '../../services/hub-api/src/features/tentativas/tentativas.repository';
import type { FiltroDeTentativas } from '../../services/hub-api/src/features/tentativas/tentativas.schemas';
import { verificarConcordancia } from '../../services/hub-api/src/features/fila/fila-de-erro.test-support';
import { startHubApi } from '../../services/hub-api/src/start';
import { type PgClient, pg, semearLeituras } from '../support/seed-large-tables';

process.env.LOG_LEVEL ??= 'warn';

const EVENTOS = 1_000_000;
const AMOSTRAS = 200;
const AQUECIMENTO = 20;
const LOTE = 500;
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DATABASE = process.env.BENCH_DATABASE ?? 'hub_entregas_bench';
const VHOST = `hub-entregas-bench-${process.pid}`;
const HEADING = '## Delivery routes, reprocessing and the error queue';
const manter = process.argv.includes('--manter');
/** The last migration applied, named in the section (the indexes the routes use depend on it). */
const MIGRACOES = readdirSync(path.resolve(__dirname, '../../packages/hub-data/migrations')).sort().at(-1) ?? '';
const log = (message: string) => process.stderr.write(`${message}\n`);
const ctl = (...args: string[]) => execFileSync('rabbitmqctl', ['-q', ...args], { encoding: 'utf8' });

const quantil = (ordenados: number[], q: number) =>
  ordenados[Math.min(ordenados.length - 1, Math.ceil(q * ordenados.length) - 1)] ?? Number.NaN;

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
  return { p50: quantil(tempos, 0.5), p99: quantil(tempos, 0.99), max: tempos[tempos.length - 1] ?? Number.NaN };
}

async function plano(client: PgClient, sql: Prisma.Sql): Promise<string> {
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(
    `explain (analyze, buffers, costs off, timing on) ${sql.text}`,
    sql.values,
  );
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

const segundos = (t: number) => (performance.now() - t) / 1000;

/** A query or title as the section prints it: ids and instants replaced by what they are. */
const semIds = (texto: string) =>
  texto
    .replace(/[0-9a-f-]{36}/g, '{uuid}')
    .replace(/desde=[0-9T:.-]+Z/, 'desde={a day}')
    .replace(/ate=[0-9T:.-]+Z/, 'ate={its end}');

async function main() {
  const loadBefore = loadavg()[0] ?? 0;
  const admin = await pg(ADMIN_URL);
  const exists = (await admin.query('select 1 from pg_database where datname = $1', [DATABASE])).rows.length > 0;
  if (!exists) await admin.query(`create database ${DATABASE}`);
  await admin.end();
  const databaseUrl = withDatabase(ADMIN_URL, DATABASE);
  ctl('add_vhost', VHOST);
  ctl('set_permissions', '-p', VHOST, 'guest', '.*', '.*', '.*');

  const identity = await startTestIdentity();
  const access = await startAccessForTests(identity);
  const keysDir = await mkdtemp(path.join(tmpdir(), 'bench-entregas-'));
  const hub = await startHubApi(
    hubApiConfig.parse({
      ...identity.env,
      HUB_DATABASE_URL: databaseUrl,
      ACCESS_URL: access.url,
      HUB_SIGNING_KEYS_FILE: path.join(keysDir, 'keys.json'),
      RABBITMQ_URL: `amqp://guest:guest@127.0.0.1:5672/${VHOST}`,
      HUB_REPROCESSAMENTO_LOTE: String(LOTE),
    }),
    createLogger('hub-api', 'warn'),
    { port: 0 },
  );
  const client = await pg(databaseUrl);
  try {
    await semearLeituras(client, EVENTOS, log, { tentativas: true });
    const token = await access.userWith(`monitor.bench@${access.companyDomain}`, {
      monitoramento: { ler: true, editar: true },
    });
    const meio = (
      await client.query<{ id: string; evento: string; assinatura: string; assinante: string; tipo: string }>(
        `select id::text, evento_id::text as evento, assinatura_id::text as assinatura,
                aplicativo_assinante_id::text as assinante, tipo_de_evento_id::text as tipo
           from entrega order by criada_em desc offset 1500000 limit 1`,
      )
    ).rows[0];
    if (!meio) throw new Error('no deliveries');
    const casos: { query: string; sql?: Prisma.Sql; rota?: string }[] = [
      { query: '?pagina=1', sql: sqlDaPagina({}, { pagina: 1, tamanho: 10 }) },
      { query: '?pagina=50000', sql: sqlDaPagina({}, { pagina: 50_000, tamanho: 10 }) },
      { query: '?situacao=fila_de_erro', sql: sqlDaPagina({ situacao: 'fila_de_erro' }, { pagina: 1, tamanho: 10 }) },
      {
        query: `?assinatura_id=${meio.assinatura}`,
        sql: sqlDaPagina({ assinatura_id: meio.assinatura }, { pagina: 1, tamanho: 10 }),
      },
      { query: `?evento_id=${meio.evento}`, sql: sqlDaPagina({ evento_id: meio.evento }, { pagina: 1, tamanho: 10 }) },
      {
        query: `?aplicativo_assinante_id=${meio.assinante}`,
        sql: sqlDaPagina({ aplicativo_assinante_id: meio.assinante }, { pagina: 1, tamanho: 10 }),
      },
      {
        query: `?tipo_de_evento_id=${meio.tipo}`,
        sql: sqlDaPagina({ tipo_de_evento_id: meio.tipo }, { pagina: 1, tamanho: 10 }),
      },
      {
        query: `?situacao=fila_de_erro&assinatura_id=${meio.assinatura}`,
        sql: sqlDaPagina({ situacao: 'fila_de_erro', assinatura_id: meio.assinatura }, { pagina: 1, tamanho: 10 }),
      },
      {
        rota: '/entrega/filtro',
        query: `?situacao=fila_de_erro&tipo_de_evento_id=${meio.tipo}`,
        sql: sqlDoFiltro({ situacao: 'fila_de_erro', tipo_de_evento_id: meio.tipo }),
      },
      { rota: '/entrega/filtro', query: `?evento_id=${meio.evento}`, sql: sqlDoFiltro({ evento_id: meio.evento }) },
      { rota: `/entrega/${meio.id}`, query: '' },
    ];
    // The attempts (GET /tentativa): a delivery of the error queue (8 attempts), one attempt in the
    // middle of the table, a day in the middle of the 30.
    const tentativas = (
      await client.query<{ entrega: string; id: string; desde: string; ate: string }>(
        `select (select entrega_id::text from tentativa where numero = 8 order by iniciada_em desc offset 1000 limit 1) as entrega,
                (select id::text from tentativa order by iniciada_em desc offset 1800000 limit 1) as id,
                to_char(date_trunc('day', now() - interval '15 days') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as desde,
                to_char(date_trunc('day', now() - interval '14 days') at time zone 'UTC' - interval '1 millisecond',
                        'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ate`,
      )
    ).rows[0];
    if (!tentativas?.entrega || !tentativas.id) throw new Error('no attempts');
    const filtrosDeTentativas: { query: string; filtro: FiltroDeTentativas; pagina?: number }[] = [
      { query: '?pagina=1', filtro: {} },
      { query: '?pagina=50000', filtro: {}, pagina: 50_000 },
      { query: '?sucesso=false', filtro: { sucesso: false } },
      { query: '?sucesso=true', filtro: { sucesso: true } },
      { query: '?status_http=500', filtro: { status_http: 500 } },
      { query: `?entrega_id=${tentativas.entrega}`, filtro: { entrega_id: tentativas.entrega } },
      { query: `?assinatura_id=${meio.assinatura}`, filtro: { assinatura_id: meio.assinatura } },
      // with another filter: tentativa_assinatura (migration 026) walked in the list's order
      {
        query: `?assinatura_id=${meio.assinatura}&sucesso=false`,
        filtro: { assinatura_id: meio.assinatura, sucesso: false },
      },
      {
        query: `?desde=${tentativas.desde}&ate=${tentativas.ate}`,
        filtro: { desde: new Date(tentativas.desde), ate: new Date(tentativas.ate) },
      },
    ];
    casos.push(
      ...filtrosDeTentativas.map((c) => ({ rota: '/tentativa', query: c.query })),
      { rota: '/tentativa/filtro', query: '?sucesso=false' },
      { rota: `/tentativa/${tentativas.id}`, query: '' },
    );
    const linhas: string[] = [];
    for (const caso of casos) {
      const rota = caso.rota ?? '/entrega';
      const r = await medir(`${hub.url}${rota}${caso.query}`, token);
      const linha = `| GET ${rota.replace(/[0-9a-f-]{36}/g, '{id}')} | \`${semIds(caso.query)}\` | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} |`;
      linhas.push(linha);
      log(linha);
    }
    const planos: [string, Prisma.Sql][] = [
      ['GET /entrega: total', sqlDoTotal({})],
      ['GET /entrega?situacao=fila_de_erro: total', sqlDoTotal({ situacao: 'fila_de_erro' })],
      ...casos
        .filter((c) => c.sql)
        .slice(2)
        .map((c) => [`GET ${c.rota ?? '/entrega'}${c.query}`, c.sql as Prisma.Sql] as [string, Prisma.Sql]),
      ...filtrosDeTentativas
        .filter((c) => !c.pagina)
        .map((c) => [`GET /tentativa${c.query}: total`, totalDeTentativas(c.filtro)] as [string, Prisma.Sql]),
      ...filtrosDeTentativas
        .filter((c) => c.pagina || c.filtro.assinatura_id || c.filtro.desde)
        .map(
          (c) =>
            [`GET /tentativa${c.query}`, paginaDeTentativas(c.filtro, { pagina: c.pagina ?? 1, tamanho: 10 })] as [
              string,
              Prisma.Sql,
            ],
        ),
      ['GET /tentativa/filtro?sucesso=false', filtroDeTentativas({ sucesso: false })],
    ];
    const textos: string[] = [];
    for (const [titulo, sql] of planos)
      textos.push(`${semIds(titulo)}:`, '', '```', await plano(client, sql), '```', '');

    // The error queue: the seed's deliveries in fila_de_erro have no message yet.
    const naFila = (
      await client.query<{ n: number }>("select count(*)::int as n from entrega where situacao = 'fila_de_erro'")
    ).rows[0]!.n;
    log(`deliveries in fila_de_erro: ${naFila}`);
    let t = performance.now();
    const primeira = await hub.conciliacao.conciliar();
    const tPrimeira = segundos(t);
    log(`reconciliation (republish ${primeira.entregas_republicadas}): ${tPrimeira.toFixed(1)} s`);
    t = performance.now();
    const pedido = await fetch(`${hub.url}/reprocessamento`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const solicitacao = (await pedido.json()) as { id: string; quantidade_de_entregas: number };
    const tPedido = segundos(t);
    let fim: { situacao: string; reprocessadas: number } | undefined;
    for (;;) {
      fim = (await (
        await fetch(`${hub.url}/reprocessamento/${solicitacao.id}`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as { situacao: string; reprocessadas: number };
      if (fim.situacao === 'concluida') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const tReprocessar = segundos(t);
    log(`reprocessing ${fim.reprocessadas}: ${tReprocessar.toFixed(1)} s`);
    // The pass the request's end started, then the outbox relay's publication of the new jobs.
    t = performance.now();
    // A call during that pass queues one more after it: the time covers both.
    const segunda = await hub.conciliacao.conciliar();
    const tSegunda = segundos(t);
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        'select count(*)::int as n from outbox where publicado_em is null',
      );
      if (rows[0]!.n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const tRelay = segundos(t);
    const verificacao = await verificarConcordancia({ ...hub, databaseUrl });
    log(`after: ${JSON.stringify({ ...verificacao, ids_das_mensagens: verificacao.ids_das_mensagens.length })}`);

    const [{ eventos, entregas, quantas }] = (
      await client.query<{ eventos: number; entregas: number; quantas: number }>(
        `select (select count(*) from evento)::int as eventos, (select count(*) from entrega)::int as entregas,
                (select count(*) from tentativa)::int as quantas`,
      )
    ).rows as [{ eventos: number; entregas: number; quantas: number }];
    const secao = [
      HEADING,
      '',
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.trim()}, ` +
        `Node ${process.version}, PostgreSQL 15 with its default settings, RabbitMQ 3.10 on loopback; load average ` +
        `before the run ${loadBefore.toFixed(2)}, after ${(loadavg()[0] ?? 0).toFixed(2)} (other sessions share the 2 CPUs).`,
      '',
      '```',
      'npx tsx bench/reads/delivery-lists.ts',
      '```',
      '',
      `Data: the seed of "Panel reads of events" (${eventos.toLocaleString('en')} events, ${entregas.toLocaleString('en')} ` +
        `deliveries over 30 days, ${naFila.toLocaleString('en')} of them in fila_de_erro) and their ${quantas.toLocaleString('en')} ` +
        `attempts (bench/support/seed-large-tables.ts SQL_DAS_TENTATIVAS), migrations up to ${MIGRACOES}. Each row is ` +
        `${AMOSTRAS} requests one after another (after ${AQUECIMENTO} to warm up) with a real user token.`,
      '',
      '| route | query | p50 ms | p99 ms | max ms |',
      '|---|---|---:|---:|---:|',
      ...linhas,
      '',
      'The error queue, same data (hub-api in the benchmark process, one instance):',
      '',
      '| step | what | seconds |',
      '|---|---|---:|',
      `| POST /fila/erro/conciliar (the seed has no messages) | ${primeira.entregas_republicadas.toLocaleString('en')} jobs rebuilt from the database and published with confirms | ${tPrimeira.toFixed(1)} |`,
      `| POST /reprocessamento \`{}\` answered | counts ${solicitacao.quantidade_de_entregas.toLocaleString('en')} deliveries in fila_de_erro | ${tPedido.toFixed(2)} |`,
      `| the request concluded | ${fim.reprocessadas.toLocaleString('en')} new cycles, batches of ${LOTE}, one outbox job each | ${tReprocessar.toFixed(1)} |`,
      `| the reconciliation after it | ${(primeira.entregas_republicadas).toLocaleString('en')} messages read, ${segunda.removidas_fora_da_fila_de_erro.toLocaleString('en')} removed by the second pass shown here (the first ran on its own at the end of the request) | ${tSegunda.toFixed(1)} |`,
      `| the outbox relay done | every new job published to the work queue | ${tRelay.toFixed(1)} |`,
      '',
      `Afterwards the check: ${verificacao.concordam ? 'agree' : 'DISAGREE'}, ${verificacao.mensagens} messages, ${verificacao.entregas_na_fila_de_erro} deliveries in fila_de_erro.`,
      '',
      'Plans (EXPLAIN (ANALYZE, BUFFERS) of the SQL the routes run):',
      '',
      ...textos,
    ].join('\n');
    const arquivo = path.resolve(__dirname, '../../docs/benchmarks.md');
    const texto = await readFile(arquivo, 'utf8');
    const inicio = texto.indexOf(`${HEADING}\n`);
    const fimDaSecao = inicio === -1 ? -1 : texto.indexOf('\n## ', inicio + HEADING.length);
    const novo =
      inicio === -1
        ? `${texto.trimEnd()}\n\n${secao}`
        : `${texto.slice(0, inicio)}${secao}${fimDaSecao === -1 ? '' : `\n${texto.slice(fimDaSecao + 1)}`}`;
    await writeFile(arquivo, `${novo.trimEnd()}\n`);
    log(`section "${HEADING}" written to docs/benchmarks.md`);
  } finally {
    await client.end();
    await hub.stop();
    await access.close();
    await identity.close();
    await rm(keysDir, { recursive: true, force: true });
    ctl('delete_vhost', VHOST);
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
