// The platform beside its floor (issue 19), in one run on one machine: the same ~1 KiB benchmark event
// (bench/support/benchmark-event.ts) at saturation (autocannon, 50 connections, BENCH_FLOOR_EVENTS events)
// until every accepted event's deliveries have arrived at the subscribers (bench/support/subscribers.ts, a
// process of its own), for the floor (bench/floor), hub-api directly, through the gateway, and — for both —
// with one subscriber of three answering 500 (the healthy two's deliveries counted). For each: e2e events/s
// (accepted ÷ time from the first request to the last delivery's arrival), the machine's CPU ms per
// accepted event (/proc/stat: every process on the machine, bench/support/cpu.ts) and the ratios to the floor.
//
//   BENCH_ONLY=floor pnpm bench          this section alone (`pnpm bench` runs it after the others)
//   npx tsx bench/floor/compare.ts       the same
//
// BENCH_FLOOR_EVENTS: events per row (10,000); BENCH_FLOOR_HEALTHY_ONLY=1: without the failing rows;
// BENCH_FLOOR_HUB_API_FIRST=1: hub-api's row before the gateway's (they share the platform's databases). The
// platform is started by bench/support/platform.ts (every service, the delivery worker included, on free ports,
// databases and a vhost of its own; with BENCH_GATEWAY_URL a running platform, and the hub-api row is left
// out). Writes "## Current figures" at the top of docs/benchmarks.md.
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { spawnService } from '../../packages/testing/src';
import { type ContaDeCpu, contarCpu, cpuPorUnidade } from '../support/cpu';
import { descreverEscritas, lerEscritas } from '../support/group-commit-metrics';
import { registrarPublicacao } from '../support/benchmark-event';
import { deleteVhost } from '../support/local-infra';
import { obtainPlatform } from '../support/platform';
import { writeSection } from '../support/report';
import { startFloor } from '.';
import { databasesLike, type MedidorPg, medidorPg, type TrabalhoPg } from './postgres';

const EVENTOS = Number(process.env.BENCH_FLOOR_EVENTS ?? 10_000);
const CONNECTIONS = 50;
/** Give up on a row when no new delivery has arrived for this long. */
const SEM_PROGRESSO_MS = 60_000;
export const HEADING = '## Current figures';
const COMMAND = 'BENCH_ONLY=floor pnpm bench';
// Per run: two runs at once on a shared machine must not wipe each other's queues (freshVhost deletes it first).
const VHOST = `hub-bench-chao-${process.pid}`;

export interface Alvo {
  nome: string;
  url: string;
  headers: Record<string, string>;
  corpo: string;
  /** Deliveries per event that count (to the healthy subscribers). */
  saudaveis: number;
  /** The platform's /metrics, for its items per statement (bench/support/group-commit-metrics.ts). */
  metricas?: string[];
}

export interface Linha {
  nome: string;
  aceitos: number;
  non2xx: number;
  erros: number;
  chegadas: number;
  esperadas: number;
  segundos: number;
  eventosPorSegundo: number;
  /** Accepted ÷ the load's own duration (the last answer, not the last delivery). */
  publicadosPorSegundo: number;
  cpuMsPorEvento: number;
  /** The same without the processes that are none of the run's ('other': other sessions' work). */
  cpuMsProprio: number;
  conta: ContaDeCpu;
  carga: number;
  /** PostgreSQL's work per delivery (the all-healthy rows, where a delivery is one attempt). */
  pg?: TrabalhoPg;
  /** The platform's mean items per statement of each group commit (bench/support/group-commit-metrics.ts). */
  escritas?: string;
}

/** Where a row's PostgreSQL work is counted: its databases. */
interface ContaPg {
  medidor: MedidorPg;
  bancos: string[];
}

export interface Contagem {
  entregues: number;
  falhas: number;
  sem_resposta: number;
  ultima: number;
}

/** `quantos` receivers in a process of their own (bench/support/subscribers.ts): their /ok URLs, their counts. */
export function receptores(quantos = 3) {
  const processo = spawnService(path.join(__dirname, '../support/subscribers.ts'), { RECEPTORES: String(quantos) });
  const urls = Promise.all(Array.from({ length: quantos }, (_, i) => processo.url(`receptor-${i}`)));
  return {
    urls,
    contagem: async () => (await (await fetch(`${(await urls)[0]!.replace(/\/ok$/, '')}/contagem`)).json()) as Contagem,
    zerar: async () => {
      await fetch(`${(await urls)[0]!.replace(/\/ok$/, '')}/zerar`, { method: 'POST' });
    },
    stop: () => processo.stop(),
  };
}
export type Receptores = ReturnType<typeof receptores>;

/** Waits until `esperadas` distinct deliveries arrived, or none came for SEM_PROGRESSO_MS, or `prazoMs` passed. */
export async function esperarChegadas(r: Receptores, esperadas: number, prazoMs = Infinity): Promise<Contagem> {
  const limite = Date.now() + prazoMs;
  let ultima = await r.contagem();
  let desde = Date.now();
  while (ultima.entregues < esperadas && Date.now() - desde < SEM_PROGRESSO_MS && Date.now() < limite) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const agora = await r.contagem();
    if (agora.entregues > ultima.entregues) desde = Date.now();
    ultima = agora;
  }
  return ultima;
}

export async function aquecer(r: Receptores, alvo: Alvo, log: (line: string) => void) {
  log(`  warming up ${alvo.nome}…`);
  const antes = (await r.contagem()).entregues;
  const w = await autocannon({ ...pedido(alvo), connections: 10, amount: 1_000 });
  await esperarChegadas(r, antes + w['2xx'] * alvo.saudaveis);
}

const pedido = (alvo: Alvo) => ({
  url: alvo.url,
  method: 'POST',
  headers: { 'content-type': 'application/json', ...alvo.headers },
  body: alvo.corpo,
  timeout: 30,
});

export async function medir(
  r: Receptores,
  alvo: Alvo,
  bancos: ((nome: string) => boolean) | undefined,
  log: (line: string) => void,
  contaPg?: ContaPg,
): Promise<Linha> {
  const carga = os.loadavg()[0]!;
  log(`  ${alvo.nome}: ${EVENTOS} events, autocannon, ${CONNECTIONS} connections (load average ${carga.toFixed(2)})…`);
  await r.zerar();
  const marco = contaPg ? await contaPg.medidor.marcar(contaPg.bancos) : undefined;
  const escritasAntes = alvo.metricas ? await lerEscritas(alvo.metricas) : undefined;
  const cpu = contarCpu(bancos);
  const inicio = Date.now();
  const resultado = await autocannon({ ...pedido(alvo), connections: CONNECTIONS, amount: EVENTOS });
  const aceitos = resultado['2xx'];
  const esperadas = aceitos * alvo.saudaveis;
  const c = await esperarChegadas(r, esperadas);
  const conta = cpu.fim();
  const segundos = ((c.ultima || Date.now()) - inicio) / 1000;
  const linha: Linha = {
    nome: alvo.nome,
    aceitos,
    non2xx: resultado.non2xx,
    erros: resultado.errors + resultado.timeouts,
    chegadas: c.entregues,
    esperadas,
    segundos,
    eventosPorSegundo: aceitos / segundos,
    publicadosPorSegundo: aceitos / resultado.duration,
    cpuMsPorEvento: (conta.ocupadoSegundos * 1000) / Math.max(1, aceitos),
    cpuMsProprio:
      (conta.porClasse.filter(([classe]) => classe !== 'other').reduce((soma, [, s]) => soma + s, 0) * 1000) /
      Math.max(1, aceitos),
    conta,
    carga,
  };
  log(
    `    ${aceitos} accepted, ${c.entregues}/${esperadas} deliveries in ${segundos.toFixed(1)} s: ` +
      `${linha.eventosPorSegundo.toFixed(0)} events/s e2e, machine CPU ${linha.cpuMsPorEvento.toFixed(2)} ms per event ` +
      `(the run's own processes ${linha.cpuMsProprio.toFixed(2)} ms)`,
  );
  log(`    CPU per event by process: ${cpuPorUnidade(conta, aceitos)}`);
  if (alvo.metricas && escritasAntes) {
    linha.escritas = descreverEscritas(escritasAntes, await lerEscritas(alvo.metricas));
    log(`    items per statement: ${linha.escritas}`);
  }
  if (contaPg && marco) {
    linha.pg = await contaPg.medidor.medir(marco, aceitos * alvo.saudaveis).catch((error: Error) => {
      log(`    PostgreSQL's work not measured: ${error.message}`);
      return undefined;
    });
    if (linha.pg) log(`    PostgreSQL per delivery: ${descreverPg(linha.pg)}`);
    if (linha.pg && process.env.BENCH_PG_DETALHE) log(`    WAL records per delivery:\n${linha.pg.porRegistro}`);
  }
  return linha;
}

function descreverPg(t: TrabalhoPg): string {
  return (
    `WAL ${t.walPorEntrega.toFixed(0)} B (${t.walSemFpiPorEntrega.toFixed(0)} B without full-page images; ` +
    `the whole cluster ${t.walDoClusterPorEntrega.toFixed(0)} B), index entries ${t.indicesPorEntrega.toFixed(1)} ` +
    `(estimate ${t.indicesEstimadosPorEntrega.toFixed(1)}), rows written ${t.linhasPorEntrega.toFixed(2)} ` +
    `(${(t.hot * 100).toFixed(0)} % of updates HOT). By table: ${t.porTabela}. WAL by relation: ${t.porRelacao}`
  );
}

/** Runs every row; gives them with the section for docs/benchmarks.md. */
export async function compararComOChao(log: (line: string) => void): Promise<{ linhas: Linha[]; secao: string }> {
  const cargaAntes = os.loadavg()[0]!;
  const r = receptores();
  const platform = await obtainPlatform(log, { vhost: VHOST, ownDatabasesOnly: true });
  let floor: Awaited<ReturnType<typeof startFloor>> | undefined;
  let medidor: MedidorPg | undefined;
  try {
    const [a, b, c] = await r.urls;
    const falha = c!.replace(/\/ok$/, '/falha');
    const conjuntos = { saudavel: [a!, b!, c!], falha: [a!, b!, falha] };
    floor = await startFloor(conjuntos);
    const { token, corpos } = await registrarPublicacao(platform, conjuntos);
    const auth = { authorization: `Bearer ${token}` };
    const { metricsUrls: metricas } = platform;
    // PostgreSQL is shared: only backends of the floor's and the platform's databases are the run's.
    const floorDatabase = floor.database;
    const prefix = platform.databasePrefix;
    const bancos = prefix ? (nome: string) => nome === floorDatabase || nome.startsWith(prefix) : undefined;
    const alvos = {
      floor: { nome: 'floor', url: `${floor.url}/eventos/saudavel`, headers: {}, corpo: corpos.saudavel, saudaveis: 3 },
      hubApi: platform.hubApiUrl
        ? {
            nome: 'platform, POST /eventos on hub-api',
            url: `${platform.hubApiUrl}/eventos`,
            headers: auth,
            corpo: corpos.saudavel,
            saudaveis: 3,
            metricas,
          }
        : undefined,
      gateway: {
        nome: 'platform, through the gateway',
        url: `${platform.gatewayUrl}/eventos`,
        headers: auth,
        corpo: corpos.saudavel,
        saudaveis: 3,
        metricas,
      },
      floorFalha: {
        nome: 'floor, 1 subscriber of 3 answering 500',
        url: `${floor.url}/eventos/falha`,
        headers: {},
        corpo: corpos.falha,
        saudaveis: 2,
      },
      gatewayFalha: {
        nome: 'platform through the gateway, 1 subscriber of 3 answering 500',
        url: `${platform.gatewayUrl}/eventos`,
        headers: auth,
        corpo: corpos.falha,
        saudaveis: 2,
        metricas,
      },
    };
    // JIT, pools and caches of every process on each path, before any measure.
    for (const alvo of [alvos.floor, alvos.hubApi, alvos.gateway]) if (alvo) await aquecer(r, alvo, log);
    // PostgreSQL's work per delivery, in the all-healthy rows (bench/floor/postgres.ts).
    medidor = await medidorPg();
    const platformDatabases = prefix ? await databasesLike(prefix) : [];
    const contaFloor = medidor && { medidor, bancos: [floorDatabase] };
    const contaPlatform = medidor && platformDatabases.length > 0 ? { medidor, bancos: platformDatabases } : undefined;
    const linhas: Linha[] = [];
    linhas.push(await medir(r, alvos.floor, bancos, log, contaFloor));
    // The platform's rows share its databases: the second runs on the first one's events and
    // deliveries, and paid about 0.25 ms more of PostgreSQL per event for it (2026-12-04). The
    // gateway's row, the one with targets, runs first, on fresh tables as the floor's does;
    // BENCH_FLOOR_HUB_API_FIRST=1 runs hub-api's first.
    const plataforma = [alvos.gateway, alvos.hubApi].filter((alvo) => alvo !== undefined);
    if (process.env.BENCH_FLOOR_HUB_API_FIRST === '1') plataforma.reverse();
    for (const alvo of plataforma) linhas.push(await medir(r, alvo, bancos, log, contaPlatform));
    // The failing rows last: their failed jobs keep coming back (every 5 s for the floor, the
    // platform's DELIVERY_RETRY_DELAYS for it), so the floor stops before the platform's row.
    // BENCH_FLOOR_HEALTHY_ONLY=1 leaves them out (a comparison of the healthy path alone).
    if (!process.env.BENCH_FLOOR_HEALTHY_ONLY) {
      linhas.push(await medir(r, alvos.floorFalha, bancos, log));
      await floor.stop();
      floor = undefined;
      linhas.push(await medir(r, alvos.gatewayFalha, bancos, log));
    }
    return { linhas, secao: secao(linhas, platform.mode, cargaAntes) };
  } finally {
    await medidor?.close();
    await floor?.stop();
    await platform.stop();
    await r.stop();
    if (platform.rabbitmqUrl?.endsWith(`/${VHOST}`)) deleteVhost(VHOST);
  }
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const milhar = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');

/** The least and the most share of the machine's busy time that was not the run's, over the rows. */
function alheio(linhas: Linha[]): string {
  const partes = linhas.map((l) => Math.max(0, 1 - l.cpuMsProprio / l.cpuMsPorEvento) * 100);
  return `${Math.min(...partes).toFixed(0)}–${Math.max(...partes).toFixed(0)} %`;
}

/** PostgreSQL's work per delivery of the all-healthy rows (bench/floor/postgres.ts), with the platform ÷ floor. */
function secaoPg(linhas: Linha[]): string[] {
  const medidas = linhas.filter((l) => l.pg);
  const chao = medidas.find((l) => l.nome === 'floor')?.pg;
  if (medidas.length === 0) return [];
  const razao = (a: number, b: number | undefined) => (b ? `${fmt(a / b, 1)}×` : '–');
  return [
    "PostgreSQL's work per delivery (the all-healthy rows; bench/floor/postgres.ts). WAL: the bytes of every WAL " +
      "record written during the row (until its writes settled) that touches a block of the row's databases, plus " +
      "those transactions' commit records, read back with pg_walinspect (pg_stat_wal counts the whole shared cluster, " +
      'shown in the log only); full-page images depend on when the last checkpoint was, so the figure without them ' +
      'is beside it. Index entries: B-tree leaf inserts in the same records (exact: a partial index that skips the ' +
      "row writes nothing), and the estimate from pg_stat_user_tables (inserts and non-HOT updates × the table's " +
      'indexes, partial ones counted as written). Rows: heap tuples inserted, updated or deleted.',
    '',
    '| row | WAL bytes per delivery | without full-page images | ÷ floor | index entries per delivery (WAL) | ÷ floor | estimate from pg_stat_user_tables | rows written per delivery | updates HOT | command |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...medidas.map((l) => {
      const t = l.pg!;
      return (
        `| ${l.nome} | ${milhar(t.walPorEntrega)} | ${milhar(t.walSemFpiPorEntrega)} | ` +
        `${razao(t.walSemFpiPorEntrega, chao?.walSemFpiPorEntrega)} | ${fmt(t.indicesPorEntrega, 1)} | ` +
        `${razao(t.indicesPorEntrega, chao?.indicesPorEntrega)} | ${fmt(t.indicesEstimadosPorEntrega, 1)} | ` +
        `${fmt(t.linhasPorEntrega)} | ${fmt(t.hot * 100, 0)} % | \`${COMMAND}\` |`
      );
    }),
    '',
    'Where it goes, per delivery:',
    '',
    ...medidas.map((l) => `- ${l.nome}: by table ${l.pg!.porTabela}. WAL by relation: ${l.pg!.porRelacao}.`),
    '',
  ];
}

function secao(linhas: Linha[], mode: string, cargaAntes: number): string {
  const chao = linhas[0]!;
  const chaoFalha = linhas.find((l) => l.nome.startsWith('floor,'))!;
  const cpus = os.cpus();
  const tabela = linhas.map((l) => {
    const base = l.nome.startsWith('floor') ? l : l.nome.includes('500') ? chaoFalha : chao;
    const completa = l.chegadas >= l.esperadas ? '' : ` (only ${l.chegadas} of ${l.esperadas} arrived)`;
    return (
      `| ${l.nome}${completa} | ${milhar(l.eventosPorSegundo)} | ${fmt(l.cpuMsPorEvento)} | ` +
      `${fmt(l.eventosPorSegundo / base.eventosPorSegundo)} | ${fmt(l.cpuMsPorEvento / base.cpuMsPorEvento, 1)}× | ` +
      `${fmt(l.cpuMsProprio)} | ${fmt(l.cpuMsProprio / base.cpuMsProprio, 1)}× | ` +
      `${milhar(l.publicadosPorSegundo)} | ${l.aceitos} | ${l.non2xx + l.erros} | ${fmt(l.carga)} | \`${COMMAND}\` |`
    );
  });
  return [
    HEADING,
    '',
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus.length} × ` +
      `${cpus[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, loopback; load average ${fmt(cargaAntes)} ` +
      `before the run and ${fmt(os.loadavg()[0]!)} after, the 1-minute load average at each row's start in the table. ` +
      'Other work (other sessions, their tests) may run on the machine at the same time and is counted in the ' +
      "machine's CPU: compare the rows of one run, never figures of two runs. " +
      `In this run it took ${alheio(linhas)} of the machine's busy time during the rows (machine CPU less the run's own processes).`,
    '',
    `Each row: ${EVENTOS.toLocaleString('en-US')} POSTs of the ~1 KiB benchmark event (bench/support/benchmark-event.ts) by autocannon ` +
      `with ${CONNECTIONS} connections, 3 subscriptions on 3 local receivers (bench/support/subscribers.ts, a process of its own), ` +
      "until every accepted event's deliveries to the healthy subscribers have arrived. e2e events/s: accepted events ÷ " +
      "seconds from the first request to the last delivery's arrival. Machine CPU: busy time of every CPU from " +
      '/proc/stat over the same span (every process: the load generator and the receivers too) ÷ accepted events. ' +
      "Ratios: to the floor's row (the failing rows to the floor's failing row); the issue's targets are events/s " +
      "≥ 0.5 and CPU ≤ 2× through the gateway. Own processes' CPU: the same span's CPU time of the run's " +
      "processes alone (bench/support/cpu.ts: the services, the floor, the load and the receivers, RabbitMQ's whole server, " +
      "PostgreSQL's background processes and its backends of the run's databases; not the processes counted as " +
      "'other': other sessions' work, their PostgreSQL backends, exited backends), less disturbed by other work " +
      'on the machine but still counting what others make RabbitMQ and the PostgreSQL writers do. Answered ' +
      'events/s: accepted ÷ the time to the last answer, deliveries still under way. ' +
      "The floor (bench/floor) does the least work of the platform's job on " +
      'the same parts: one durable PostgreSQL transaction per group of events for the event and its deliveries, jobs ' +
      'with publisher confirms to a quorum queue, Ed25519 signatures, keep-alive POSTs, one batched UPDATE, then the ' +
      `ack; no validation, no auth, no outbox. Platform: ${mode}.`,
    '',
    "| row | e2e events/s | machine CPU ms per event | events/s ÷ floor | CPU ÷ floor | own processes' CPU ms per event | own CPU ÷ floor | answered events/s | accepted | failed requests | load average at start | command |",
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...tabela,
    '',
    'CPU per accepted event by process (bench/support/cpu.ts; PostgreSQL and RabbitMQ are shared with anything else using them):',
    '',
    ...linhas.map((l) => `- ${l.nome}: ${cpuPorUnidade(l.conta, l.aceitos)}`),
    '',
    "Items per statement of the platform's group commits (hub_group_commit_items: publications per group write, claims, records, releases of claims given back, ordered turns passed):",
    '',
    ...linhas.filter((l) => l.escritas).map((l) => `- ${l.nome}: ${l.escritas}`),
    '',
    ...secaoPg(linhas),
  ].join('\n');
}

if (require.main === module) {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  compararComOChao(log)
    .then(({ secao: texto }) => {
      const file = path.resolve(__dirname, '../../docs/benchmarks.md');
      writeSection(file, texto, HEADING, { top: true });
      log(`\n${texto}`);
      log(`written to ${path.relative(process.cwd(), file)}`);
    })
    .catch((error) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    });
}
