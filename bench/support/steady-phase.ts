// Healthy subscribers under a steady load, for bench/delivery/noisy-destination-isolation.ts and
// bench/delivery/third-of-subscribers-failing.ts. A phase: POST /eventos at a rate, open loop
// (bench/support/paced-load.ts), then a wait until every accepted event's deliveries to the healthy subscribers
// (bench/support/subscribers.ts, their /medir path) arrived or a deadline passed. Per delivery, two latencies
// on the machine's one clock (epoch milliseconds in both processes): from its publication (the event's
// recebido_em, in the body the subscriber gets) to its arrival, and from the 201 that announced it to its
// arrival. A delivery that never arrived counts as infinitely late, so a p99 shows "not arrived" once more than
// 1 % are missing.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { contarCpu, cpuDaMaquina } from './cpu';
import { pgClient } from './databases';
import { rolarWalDoRabbit } from './local-infra';
import { type Alvo, aquecer, esperarChegadas, medir, type Receptores } from '../floor/compare';
import { pacedLoad, percentile } from './paced-load';
import type { Platform } from './platform';
import type { Rastro } from './phase-timeline';

export interface Fase {
  nome: string;
  /** events/s asked */
  ritmo: number;
  ritmoEnviado: number;
  aceitos: number;
  /** non-2xx answers and failed requests */
  recusados: number;
  postP99: number;
  /** healthy deliveries the accepted events announced, and how many of them arrived */
  esperadas: number;
  chegaram: number;
  publicacaoP50: number;
  publicacaoP99: number;
  respostaP50: number;
  respostaP99: number;
  carga: number;
  /** checkpoints the server began during the phase (every database's: the server is shared), when known */
  checkpoints?: number;
  /** share of the machine's CPUs other work took during the phase (not this run's processes), when known */
  outros?: number;
}

/** A phase's two cells "checkpoints begun | other work's CPU" for a table ('–' when unknown). */
export const entornoDaFase = (f: Fase) =>
  `${f.checkpoints ?? '–'} | ${f.outros === undefined ? '–' : `${(f.outros * 100).toFixed(0)} %`}`;

/** What a phase knows of the server and the machine around it (bench/delivery/noisy-destination-isolation.ts gives it). */
export interface Entorno {
  rastro?: Rastro;
  /** a superuser URL of the platform's PostgreSQL: CHECKPOINT before the phase, checkpoints counted */
  servidor?: string;
  /** the run's own databases, so that other sessions' backends count as other work */
  bancos?: (nome: string) => boolean;
  /** the platform's RabbitMQ is the local node: its quorum WAL is rolled over before the phase */
  rabbitLocal?: boolean;
  /**
   * Before the load starts, wait for the machine to settle (esperarSossego): what was done just before
   * the phase (100,000 jobs written in bulk and vacuumed, RabbitMQ writing them to its segment files, a
   * teardown) is then not measured as the phase's own.
   */
  sossegar?: boolean;
}

/** A second whose machine-wide CPU use is under this share counts as quiet. */
const QUIETO = 0.3;
/** The longest wait for the machine to settle: a scenario whose own work keeps it busy starts anyway. */
const SOSSEGO_MAXIMO_MS = 30_000;

/**
 * Waits until two seconds in a row had the machine's CPUs (every process, /proc/stat) under QUIETO busy,
 * at most SOSSEGO_MAXIMO_MS; the milliseconds waited.
 */
export async function esperarSossego(): Promise<number> {
  const inicio = Date.now();
  let quietos = 0;
  while (quietos < 2 && Date.now() - inicio < SOSSEGO_MAXIMO_MS) {
    // /proc/stat alone: reading every process's stat and command line (contarCpu) each second would
    // be work of its own on the machine it waits on.
    const antes = cpuDaMaquina();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const depois = cpuDaMaquina();
    const ocupacao = (depois.ocupado - antes.ocupado) / Math.max(1, depois.total - antes.total);
    quietos = ocupacao < QUIETO ? quietos + 1 : 0;
  }
  return Date.now() - inicio;
}

/**
 * The server's count of checkpoints begun, after a CHECKPOINT when `antes` (so that one owed to the WAL
 * written before a phase, by a saturation measure or a bulk backlog and its vacuum, does not begin
 * inside it). Undefined when the server refuses (not a superuser, no pg_checkpoint role): the phase
 * is measured all the same.
 */
async function checkpoints(url: string, antes: boolean, log?: (line: string) => void): Promise<number | undefined> {
  const cliente = pgClient(url);
  try {
    await cliente.connect();
    if (antes) await cliente.query('checkpoint');
    const { rows } = await cliente.query<{ n: number }>(
      'select (checkpoints_timed + checkpoints_req)::int as n from pg_stat_bgwriter',
    );
    return rows[0]!.n;
  } catch (error) {
    log?.(`    no CHECKPOINT before the phase: ${(error as Error).message}`);
    return undefined;
  } finally {
    await cliente.end().catch(() => undefined);
  }
}

/**
 * Before a measured stretch: a CHECKPOINT of the platform's PostgreSQL and a rollover of RabbitMQ's
 * quorum WAL (when they are known and local), so that the storage work the writes before it owe is
 * done now and not inside the stretch (docs/decisions/isolation-benchmark.md). Returns the server's count of checkpoints begun after its CHECKPOINT, when known.
 */
export async function comecarLimpo(entorno: Entorno, log: (line: string) => void): Promise<number | undefined> {
  const antes = entorno.servidor ? await checkpoints(entorno.servidor, true, log) : undefined;
  if (entorno.rabbitLocal && !rolarWalDoRabbit()) log("    no rollover of RabbitMQ's WAL before the phase");
  return antes;
}

/** The phase's surroundings for a platform the benchmark started: its server, databases and RabbitMQ node. */
export function entornoDe(platform: Platform, vhost: string): Entorno {
  const prefixo = platform.databasePrefix;
  return {
    servidor: platform.hubDatabaseUrl,
    bancos: prefixo ? (nome: string) => nome.startsWith(prefixo) : undefined,
    rabbitLocal: platform.rabbitmqUrl?.endsWith(`/${vhost}`) ?? false,
  };
}

/** [webhook-id, arrival, the event's recebido_em] of every new delivery on /medir since the last reset. */
async function chegadas(r: Receptores): Promise<[string, number, number][]> {
  const base = (await r.urls)[0]!.replace(/\/ok$/, '');
  return (await (await fetch(`${base}/chegadas`)).json()) as [string, number, number][];
}

/** p50 and p99 of `latencias` with `faltam` more that never came. */
function percentis(latencias: number[], faltam: number): [number, number] {
  const todas = [...latencias, ...Array<number>(Math.max(0, faltam)).fill(Number.POSITIVE_INFINITY)].sort(
    (a, b) => a - b,
  );
  return [percentile(todas, 50), percentile(todas, 99)];
}

/** Milliseconds for a table: "not arrived" for a delivery that never did. */
export const ms = (valor: number) =>
  Number.isNaN(valor) ? '–' : Number.isFinite(valor) ? valor.toFixed(valor < 100 ? 1 : 0) : 'not arrived';

/**
 * One phase: `alvo` published at `ritmo` events/s for `segundos`, then at most `prazoMs` for its
 * healthy deliveries (alvo.saudaveis per event) to arrive.
 */
export async function medirFase(
  r: Receptores,
  alvo: Alvo,
  ritmo: number,
  segundos: number,
  prazoMs: number,
  log: (line: string) => void,
  entorno: Entorno = {},
): Promise<Fase> {
  const { rastro, servidor } = entorno;
  const checkpointsAntes = await comecarLimpo(entorno, log);
  if (entorno.sossegar) log(`    the machine settled in ${((await esperarSossego()) / 1000).toFixed(0)} s`);
  const carga = os.loadavg()[0]!;
  log(`  ${alvo.nome}: ${ritmo.toFixed(1)} events/s for ${segundos} s (load average ${carga.toFixed(2)})…`);
  await r.zerar();
  const cpu = servidor ? contarCpu(entorno.bancos) : undefined;
  /** delivery id → when the 201 announcing it ended (epoch ms) */
  const respondidas = new Map<string, number>();
  const resultado = await pacedLoad(
    alvo.url,
    { 'content-type': 'application/json', ...alvo.headers },
    ritmo,
    segundos,
    {
      method: 'POST',
      body: alvo.corpo,
      onAnswer: (corpo, fim) => {
        for (const e of (JSON.parse(corpo) as { entregas: { id: string }[] }).entregas)
          respondidas.set(e.id, performance.timeOrigin + fim);
      },
    },
  );
  const esperadas = resultado.ok * alvo.saudaveis;
  const limite = Date.now() + prazoMs;
  await esperarChegadas(r, esperadas, prazoMs);
  // The count includes late deliveries of an earlier phase: only this phase's ids are kept.
  let minhas = (await chegadas(r)).filter(([id]) => respondidas.has(id));
  while (minhas.length < esperadas && Date.now() < limite) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    minhas = (await chegadas(r)).filter(([id]) => respondidas.has(id));
  }
  rastro?.fim(minhas);
  const conta = cpu?.fim();
  const outros = conta
    ? (conta.porClasse.find(([c]) => c === 'other')?.[1] ?? 0) / (conta.segundos * os.cpus().length)
    : undefined;
  const depois = servidor && checkpointsAntes !== undefined ? await checkpoints(servidor, false) : undefined;
  const comecados = depois === undefined ? undefined : depois - checkpointsAntes!;
  const faltam = esperadas - minhas.length;
  const [publicacaoP50, publicacaoP99] = percentis(
    minhas.map(([, chegada, recebido]) => chegada - recebido),
    faltam,
  );
  const [respostaP50, respostaP99] = percentis(
    minhas.map(([id, chegada]) => chegada - respondidas.get(id)!),
    faltam,
  );
  const fase: Fase = {
    nome: alvo.nome,
    ritmo,
    ritmoEnviado: resultado.requestsPerSecond,
    aceitos: resultado.ok,
    recusados: resultado.non2xx + resultado.failed,
    postP99: resultado.p99,
    esperadas,
    chegaram: minhas.length,
    publicacaoP50,
    publicacaoP99,
    respostaP50,
    respostaP99,
    carga,
    checkpoints: comecados,
    outros,
  };
  log(
    `    ${fase.aceitos} accepted (${fase.recusados} refused or failed), ${fase.chegaram}/${esperadas} healthy deliveries; ` +
      `publication → arrival p50 ${ms(publicacaoP50)} ms, p99 ${ms(publicacaoP99)} ms; ` +
      `answer → arrival p50 ${ms(respostaP50)} ms, p99 ${ms(respostaP99)} ms` +
      (comecados === undefined ? '' : `; ${comecados} checkpoint(s) began`) +
      (outros === undefined ? '' : `; other work took ${(outros * 100).toFixed(0)} % of the CPUs`),
  );
  return fase;
}

/**
 * Warms up every process on `alvo`'s path (bench/floor/compare.ts's warm-up), then gives its e2e
 * saturation rate (events/s, accepted ÷ time to the last delivery): `dada` when given, else measured by
 * compare.ts's row (BENCH_FLOOR_EVENTS events, autocannon with 50 connections).
 */
export async function saturacao(
  r: Receptores,
  alvo: Alvo,
  platform: Platform,
  dada: number | undefined,
  log: (line: string) => void,
): Promise<number> {
  await aquecer(r, alvo, log);
  if (dada !== undefined) return dada;
  const prefix = platform.databasePrefix;
  const linha = await medir(r, alvo, prefix ? (nome) => nome.startsWith(prefix) : undefined, log);
  return linha.eventosPorSegundo;
}

/** The commit measured (with a + when the tree had changes), or '?' outside a git checkout. */
function commit(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: __dirname, encoding: 'utf8' }).trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '+' : ''}`;
  } catch {
    return '?';
  }
}

/** A section's first lines: its heading, when and where it ran and how busy the machine was, the command. */
export function cabecalho(heading: string, cargaAntes: number, only: string): string[] {
  const cpus = os.cpus();
  // The BENCH_* settings given, so that the lead re-runs exactly this.
  const ajustes = Object.entries(process.env)
    .filter(([nome]) => nome.startsWith('BENCH_') && nome !== 'BENCH_ONLY')
    .map(([nome, valor]) => `${nome}=${valor}`)
    .sort();
  return [
    heading,
    '',
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC at commit ${commit()} on ${cpus.length} × ` +
      `${cpus[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, loopback; load average ${cargaAntes.toFixed(2)} ` +
      `before the run and ${os.loadavg()[0]!.toFixed(2)} after (each phase's at its start in the table). ` +
      'Other work on the machine shares its CPUs: compare the rows of one run.',
    '',
    '```',
    [...ajustes, `BENCH_ONLY=${only}`, 'pnpm bench'].join(' '),
    '```',
    '',
  ];
}
