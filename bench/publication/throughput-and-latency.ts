/**
 * Benchmark of publication (issue 8): POST /eventos with 1 KiB of dados validated against a schema,
 * 3 active subscriptions of the type and version, a real application token (identity-dev).
 *
 * Run from the root: npx tsx bench/publication/throughput-and-latency.ts
 * BENCH_DURATION: seconds per saturation row (10); BENCH_PACED_DURATION: seconds of the paced row (30);
 * BENCH_LOW_RATE: a second paced row below saturation (100 events/s; 0 for none);
 * BENCH_ONLY_SATURATION=1: only the saturation rows, nothing written (for profiling).
 *
 * The platform is started like `pnpm bench` does (bench/support/platform.ts: start.mjs on free ports, the
 * services as bundles) with a RabbitMQ vhost of its own (hub-bench-publicar, made anew) and
 * databases of this run only. Rows:
 *   1. saturation (autocannon, 50 connections): a bare express 5 handler that only parses the same
 *      JSON (bench/publication/bare-express.ts, its own process: the machine's ceiling), hub-api directly,
 *      through the gateway, through the least proxy node:http makes (bench/gateway/bare-http-proxy.ts), and through
 *      the least any hop does (bench/publication/bare-tcp-relay.ts: bytes relayed, one connection to hub-api per client
 *      connection, no HTTP read);
 *   2. a steady 1,000 events/s through the gateway, open loop, evenly spaced (bench/support/paced-load.ts).
 * After the saturation rows it prints "publication alone: gateway / hub-api = X %" (issue 19: at
 * least 85 %) with the gateway's CPU ms per request, and the same for the bare pipe and the relay:
 * from those rows and BENCH_RATIO_ROUNDS (6) more rounds of the four, 3 s each, each round starting with the
 * next target, so that the machine's drift (other sessions' work) falls on all four alike. Every row of
 * the platform starts after a CHECKPOINT and a rollover of RabbitMQ's quorum WAL
 * (bench/support/steady-phase.ts, comecarLimpo), so that storage work owed by the rows before falls in none.
 * The delivery worker is not started (BENCH_START_WITHOUT, default `delivery-worker`): this measures
 * publication, and the subscriptions' URLs lead nowhere, so a worker beside it would spend the CPUs
 * retrying them (its speed is bench/delivery/worker-throughput.ts's). Every delivery job is copied to a queue
 * of this process bound beside the work queue to the jobs' exchange; for the paced row, each accepted event's
 * deliveries (ids from its 201 answer) must have arrived within 2 s of the answer. hub-api's RSS is sampled
 * from its /metrics (process_resident_memory_bytes) every 250 ms throughout. Writes its section of
 * docs/benchmarks.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { trabalhoDeEntrega } from '../../packages/contracts/src';
import { copiarTrabalhos } from '../support/delivery-job-tap';
import { type ContaDeCpu, contarCpu, cpuPorUnidade } from '../support/cpu';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { deleteVhost } from '../support/local-infra';
import { descreverEscritas, lerEscritas } from '../support/group-commit-metrics';
import { comecarLimpo, type Entorno, entornoDe } from '../support/steady-phase';
import { pacedLoad, percentile } from '../support/paced-load';
import { registrarPublicacao } from '../support/benchmark-event';
import { obtainPlatform, type Platform } from '../support/platform';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const PACED_DURATION = Number(process.env.BENCH_PACED_DURATION ?? 30);
const RATE = 1_000;
/** A second paced row at a rate this machine sustains (0: none), to see latency and jobs below saturation. */
const LOW_RATE = Number(process.env.BENCH_LOW_RATE ?? 100);
/** Services the platform runs without (BENCH_START_WITHOUT; '' for all of them). */
const SEM = process.env.BENCH_START_WITHOUT ?? 'delivery-worker';
const CONNECTIONS = 50;
/** Alternated rounds of hub-api directly, the gateway and the bare pipe for the issue 19 ratio. */
const RATIO_ROUNDS = Number(process.env.BENCH_RATIO_ROUNDS ?? 6);
const RATIO_ROUND_SECONDS = 3;
const CONFIRM_WITHIN_MS = 2_000;
const VHOST = 'hub-bench-publicar';
const HEADING = '## Publication';
const root = path.resolve(__dirname, '../..');
const log = (line: string) => process.stdout.write(`${line}\n`);

/** The registry through the gateway: a publisher, its type and version, three subscribers that lead nowhere. */
async function preparar(platform: Platform) {
  const { token, corpos } = await registrarPublicacao(platform, {
    criado: ['A', 'B', 'C'].map((x) => `https://recebedor.example/assinante_${x.toLowerCase()}`),
  });
  return { token, corpo: corpos.criado };
}

/** A bench script in its own process (the bare express handler, the bare pipe); it prints its port. */
async function startBare(
  script = 'bare-express.ts',
  args: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, script), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

/** hub-api's resident memory, from its Prometheus metrics, every 250 ms. */
function amostrarRss(hubApiUrl: string) {
  let pico = 0;
  const amostras: number[] = [];
  /** The peak of each row (the row under way when the sample was taken). */
  const picoPorFase = new Map<string, number>();
  let fase = 'warm-up';
  const timer = setInterval(async () => {
    const texto = await fetch(`${hubApiUrl}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    const bytes = Number(/^process_resident_memory_bytes(?:\{[^}]*\})? (\d+)/m.exec(texto)?.[1]);
    if (Number.isFinite(bytes)) {
      amostras.push(bytes);
      pico = Math.max(pico, bytes);
      picoPorFase.set(fase, Math.max(picoPorFase.get(fase) ?? 0, bytes));
    }
  }, 250);
  return {
    picoMb: () => pico / 2 ** 20,
    fase: (nome: string) => {
      fase = nome;
    },
    porFase: () => [...picoPorFase].map(([nome, bytes]) => `${nome} ${(bytes / 2 ** 20).toFixed(0)} MB`).join(', '),
    amostras: () => amostras.length,
    stop: () => clearInterval(timer),
  };
}

interface Linha {
  alvo: string;
  carga: string;
  eventosPorSegundo: number;
  p50: number;
  p99: number;
  aceitos: number;
  non2xx: number;
  erros: number;
  /** CPU per accepted request, by process, during the row. */
  cpu: string;
  /** The row's CPU account (saturation rows). */
  conta?: ContaDeCpu;
}

interface OpcoesDaLinha {
  /** A new Idempotency-Key per request. */
  comChave?: boolean;
  duracao?: number;
  /** The platform's server and broker: each row starts after a CHECKPOINT and a rollover of RabbitMQ's WAL. */
  entorno?: Entorno;
  /** hub-api's /metrics: the row prints how many publications each group write carried. */
  metricas?: string;
}

async function saturar(
  alvo: string,
  url: string,
  token: string,
  corpo: string,
  { comChave = false, duracao = DURATION, entorno, metricas }: OpcoesDaLinha = {},
): Promise<Linha> {
  if (entorno) await comecarLimpo(entorno, log);
  const escritasAntes = metricas ? await lerEscritas([metricas]) : undefined;
  log(`  ${alvo}: autocannon, ${CONNECTIONS} connections, ${duracao} s…`);
  const cpu = contarCpu();
  const r = await autocannon({
    url,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: corpo,
    connections: CONNECTIONS,
    duration: duracao,
    timeout: 10,
    // A new Idempotency-Key per request, as @hub/client sends one per publication.
    ...(comChave
      ? {
          requests: [
            {
              setupRequest: (req: { headers?: Record<string, string> }) => ({
                ...req,
                headers: { ...req.headers, 'idempotency-key': randomUUID() },
              }),
            },
          ],
        }
      : {}),
  });
  const conta = cpu.fim();
  const linha = {
    alvo,
    carga: `saturation (${CONNECTIONS} connections)`,
    eventosPorSegundo: r['2xx'] / (r.duration || duracao),
    p50: r.latency.p50,
    p99: r.latency.p99,
    aceitos: r['2xx'],
    non2xx: r.non2xx,
    erros: r.errors + r.timeouts,
    cpu: cpuPorUnidade(conta, r['2xx']),
    conta,
  };
  log(`    ${linha.eventosPorSegundo.toFixed(0)}/s, p50 ${linha.p50} ms, p99 ${linha.p99} ms, non-2xx ${linha.non2xx}`);
  log(`    CPU per accepted request: ${linha.cpu}`);
  if (metricas && escritasAntes)
    log(`    items per group write: ${descreverEscritas(escritasAntes, await lerEscritas([metricas]))}`);
  return linha;
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(v < 10 ? 2 : 1) : '–');

async function esperarChegadas(chegadas: Map<string, number>, ids: Iterable<string>, limiteMs: number) {
  const faltando = () => [...ids].filter((id) => !chegadas.has(id)).length;
  const fim = performance.now() + limiteMs;
  while (faltando() > 0 && performance.now() < fim) await new Promise((r) => setTimeout(r, 100));
  return faltando();
}

/** Accepted per second over rows of one target, and the CPU ms per accepted request of one process class. */
function somar(linhas: Linha[], classe?: string) {
  const aceitos = linhas.reduce((n, l) => n + l.aceitos, 0);
  const segundos = linhas.reduce((n, l) => n + l.aceitos / l.eventosPorSegundo, 0);
  const cpu = linhas.reduce((n, l) => n + (l.conta?.porClasse.find(([c]) => c === classe)?.[1] ?? 0), 0);
  return { porSegundo: aceitos / segundos, cpuMs: (cpu * 1000) / Math.max(1, aceitos) };
}

/**
 * "publication alone: <proxy> / hub-api = X %", with the proxy's CPU per request (process class
 * `classe`), over the saturation rows of both targets in this run.
 */
function publicacaoSozinha(nome: string, classe: string, diretas: Linha[], viaProxy: Linha[]): string {
  const direto = somar(diretas);
  const proxy = somar(viaProxy, classe);
  return (
    `publication alone: ${nome} / hub-api = ${((100 * proxy.porSegundo) / direto.porSegundo).toFixed(0)} % ` +
    `(${proxy.porSegundo.toFixed(0)}/s against ${direto.porSegundo.toFixed(0)}/s, ${viaProxy.length} rows each); ` +
    `${nome} CPU ${proxy.cpuMs.toFixed(3)} ms per request`
  );
}

async function escreverSecao(secao: string) {
  const arquivo = path.join(root, 'docs/benchmarks.md');
  const texto = await readFile(arquivo, 'utf8');
  const inicio = texto.indexOf(`${HEADING}\n`);
  const fim = inicio === -1 ? -1 : texto.indexOf('\n## ', inicio + HEADING.length);
  const novo =
    inicio === -1
      ? `${texto.trimEnd()}\n\n${secao}`
      : `${texto.slice(0, inicio)}${secao}${fim === -1 ? '' : `\n${texto.slice(fim + 1)}`}`;
  await writeFile(arquivo, `${novo.trimEnd()}\n`);
}

async function main() {
  const loadBefore = loadavg()[0] ?? 0;
  const bare = await startBare();
  const platform = await obtainPlatform(log, { vhost: VHOST, ownDatabasesOnly: true, without: SEM });
  // The pipe reaches hub-api the way the gateway does: on its Unix socket (start.mjs), so the
  // yardstick pays the same hop.
  const cano = platform.hubApiUrl
    ? await startBare('../gateway/bare-http-proxy.ts', [
        platform.hubApiSocket ? `unix:${platform.hubApiSocket}` : platform.hubApiUrl,
      ])
    : undefined;
  const tcp = platform.hubApiUrl
    ? await startBare('bare-tcp-relay.ts', [
        platform.hubApiSocket ? `unix:${platform.hubApiSocket}` : platform.hubApiUrl,
      ])
    : undefined;
  let fila: Awaited<ReturnType<typeof copiarTrabalhos>> | undefined;
  let rss: ReturnType<typeof amostrarRss> | undefined;
  try {
    if (!platform.hubApiUrl || !platform.rabbitmqUrl)
      throw new Error('bench/publication/throughput-and-latency.ts starts its own platform');
    const { token, corpo } = await preparar(platform);
    fila = await copiarTrabalhos(platform.rabbitmqUrl);
    rss = amostrarRss(platform.hubApiUrl);
    log(`POST /eventos, ${Buffer.byteLength(corpo)} bytes of body (1 KiB of dados), 3 subscriptions`);
    // Warm up every path (JIT, pools, caches) before measuring.
    for (const url of [
      `${bare.url}/eventos`,
      `${platform.hubApiUrl}/eventos`,
      `${platform.gatewayUrl}/eventos`,
      `${cano!.url}/eventos`,
      `${tcp!.url}/eventos`,
    ])
      await autocannon({
        url,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: corpo,
        connections: 10,
        duration: 3,
      });

    const linhas: Linha[] = [];
    linhas.push(await saturar('bare express 5 (JSON parse only)', `${bare.url}/eventos`, token, corpo));
    rss.fase('directly');
    // Every row of the platform after a CHECKPOINT and a rollover of RabbitMQ's WAL: with the worker
    // stopped the jobs pile up in the quorum queue, and RabbitMQ's WAL (512 MB) rolled over inside
    // some rows and not others, tripling its CPU per request there.
    const entorno = entornoDe(platform, VHOST);
    const metricas = `${platform.hubApiUrl}/metrics`;
    linhas.push(
      await saturar('hub-api directly', `${platform.hubApiUrl}/eventos`, token, corpo, { entorno, metricas }),
    );
    rss.fase('through the gateway');
    linhas.push(
      await saturar('through the gateway', `${platform.gatewayUrl}/eventos`, token, corpo, { entorno, metricas }),
    );
    rss.fase('through a bare pipe');
    const PIPE = 'through a bare node:http pipe (bench/gateway/bare-http-proxy.ts)';
    linhas.push(await saturar(PIPE, `${cano!.url}/eventos`, token, corpo, { entorno, metricas }));
    rss.fase('through a TCP relay');
    const RELAY = 'through a bare TCP relay (bench/publication/bare-tcp-relay.ts)';
    linhas.push(await saturar(RELAY, `${tcp!.url}/eventos`, token, corpo, { entorno, metricas }));
    // Issue 19: publication alone through the gateway against hub-api directly, in this run, with
    // more rounds of the four alternated, so that the machine's drift falls on each alike.
    const rodadas: Linha[] = [];
    const alvosDaRazao = [
      ['hub-api directly', `${platform.hubApiUrl}/eventos`],
      ['through the gateway', `${platform.gatewayUrl}/eventos`],
      [PIPE, `${cano!.url}/eventos`],
      [RELAY, `${tcp!.url}/eventos`],
    ] as const;
    for (let i = 0; i < RATIO_ROUNDS; i++) {
      log(`  ratio round ${i + 1} of ${RATIO_ROUNDS}:`);
      // Each round starts with the next target, so that each comes first, second, third and fourth alike.
      for (let j = 0; j < alvosDaRazao.length; j++) {
        const [alvo, url] = alvosDaRazao[(i + j) % alvosDaRazao.length]!;
        rodadas.push(await saturar(alvo, url, token, corpo, { duracao: RATIO_ROUND_SECONDS, entorno, metricas }));
      }
    }
    const de = (alvo: string) => [...linhas, ...rodadas].filter((l) => l.alvo === alvo);
    const gatewayRatio = publicacaoSozinha('gateway', 'gateway', de('hub-api directly'), de('through the gateway'));
    const pipeRatio = publicacaoSozinha(
      'bare node:http pipe',
      'bench/gateway/bare-http-proxy',
      de('hub-api directly'),
      de(PIPE),
    );
    const relayRatio = publicacaoSozinha(
      'bare TCP relay',
      'bench/publication/bare-tcp-relay',
      de('hub-api directly'),
      de(RELAY),
    );
    const gatewayMet = somar(de('through the gateway')).porSegundo >= 0.85 * somar(de('hub-api directly')).porSegundo;
    log(`  ${gatewayRatio}`);
    log(`  ${pipeRatio}`);
    log(`  ${relayRatio}`);
    rss.fase('keyed');
    linhas.push(
      await saturar('hub-api directly, an Idempotency-Key each', `${platform.hubApiUrl}/eventos`, token, corpo, {
        comChave: true,
        entorno,
        metricas,
      }),
    );
    const saturados = [...linhas.slice(1), ...rodadas].reduce((n, l) => n + l.aceitos, 0);
    // BENCH_ONLY_SATURATION=1: the saturation rows and nothing written (for profiling runs,
    // e.g. NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles every service of the platform).
    if (process.env.BENCH_ONLY_SATURATION === '1') return;

    // Let the jobs of the saturation rows drain, so the paced row's arrivals are its own.
    const antesDoRitmo = fila.chegadas.size;
    log(`  waiting for the saturation rows' jobs to drain (${antesDoRitmo} arrived so far)…`);
    let estavel = 0;
    while (estavel < 3) {
      const n = fila.chegadas.size;
      await new Promise((r) => setTimeout(r, 500));
      estavel = fila.chegadas.size === n ? estavel + 1 : 0;
    }

    /** A paced row through the gateway and the arrival of its events' delivery jobs. */
    const ritmado = async (rate: number) => {
      if (!fila) throw new Error('no consumer');
      log(`  through the gateway: ${rate} events/s, paced, ${PACED_DURATION} s…`);
      rss?.fase(`${rate}/s paced`);
      const respostas: { fim: number; entregas: string[] }[] = [];
      const cpu = contarCpu();
      const r = await pacedLoad(
        `${platform.gatewayUrl}/eventos`,
        { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        rate,
        PACED_DURATION,
        {
          method: 'POST',
          body: corpo,
          onAnswer: (body, fim) =>
            respostas.push({
              fim,
              entregas: (JSON.parse(body) as { entregas: { id: string }[] }).entregas.map((e) => e.id),
            }),
        },
      );
      linhas.push({
        alvo: 'through the gateway',
        carga: `${rate}/s paced (open loop, evenly spaced)`,
        // Accepted over the whole time, the wait for the last answers included (requestsPerSecond counts sent).
        eventosPorSegundo: r.sent ? (r.requestsPerSecond * r.ok) / r.sent : 0,
        p50: r.p50,
        p99: r.p99,
        aceitos: r.ok,
        non2xx: r.non2xx,
        erros: r.failed,
        cpu: cpuPorUnidade(cpu.fim(), r.ok),
      });
      const lentas = r.slowest.slice(0, 5).map(([at, t]) => `${t.toFixed(0)} ms at ${at.toFixed(1)} s`);
      log(`    p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms, errors ${r.failed}; slowest: ${lentas.join(', ')}`);
      const ids = respostas.flatMap((x) => x.entregas);
      const faltando = await esperarChegadas(fila.chegadas, ids, 10_000);
      const chegadas = fila.chegadas;
      const atrasos = respostas
        .flatMap((x) => x.entregas.map((id) => (chegadas.get(id) ?? Number.POSITIVE_INFINITY) - x.fim))
        .sort((x, y) => x - y);
      const foraDoPrazo = atrasos.filter((x) => x > CONFIRM_WITHIN_MS).length;
      const semTres = respostas.filter((x) => x.entregas.length !== 3).length;
      const ok = r.p99 < 50 && r.non2xx === 0 && r.failed === 0;
      const confirmOk = foraDoPrazo === 0 && faltando === 0 && semTres === 0;
      const texto =
        `${rate}/s: ${respostas.length} accepted events, ${ids.length} delivery ids in their answers; ` +
        `${faltando} never arrived, ${foraDoPrazo} arrived more than ${CONFIRM_WITHIN_MS / 1000} s after their event's ` +
        `answer; from answer to arrival p50 ${ms(percentile(atrasos, 50))} ms, p99 ${ms(percentile(atrasos, 99))} ms, ` +
        `max ${ms(atrasos[atrasos.length - 1] ?? Number.NaN)} ms`;
      log(`    ${texto}`);
      return { r, ok, confirmOk, texto };
    };
    const principal = await ritmado(RATE);
    const baixo = LOW_RATE > 0 ? await ritmado(LOW_RATE) : undefined;
    const ritmo = principal.r;
    // Every job of the saturation rows too (3 per accepted event), each at least once.
    const esperadosNaSaturacao = 3 * saturados;
    const faltandoDaSaturacao = Math.max(0, esperadosNaSaturacao - antesDoRitmo);
    rss.stop();

    const ceiling = linhas[0]!.eventosPorSegundo;
    const direto = linhas[1]!.eventosPorSegundo;
    const pacedOk = principal.ok;
    const confirmOk = principal.confirmOk;
    const rssOk = rss.picoMb() < 300;
    const sim = (ok: boolean) => (ok ? '**met**' : '**NOT met**');
    const cpu = cpus();
    const secao = [
      HEADING,
      '',
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu.length} × ${cpu[0]?.model.trim()}, ` +
        `Node ${process.version}, PostgreSQL 15 with its default settings, RabbitMQ with a quorum queue, loopback; ` +
        `load average before the run ${loadBefore.toFixed(2)}, after ${(loadavg()[0] ?? 0).toFixed(2)} ` +
        '(the platform, the load generator, the queue consumer and other sessions share these CPUs).',
      '',
      '```',
      'npx tsx bench/publication/throughput-and-latency.ts',
      '```',
      '',
      `Platform: ${platform.mode}${SEM ? `, without ${SEM} (jobs stay in the work queue; deliveries are measured in "Delivery worker: deliveries per second")` : ''}. Each request is POST /eventos with a real application token (identity-dev), ` +
        `a ${Buffer.byteLength(corpo)}-byte body whose dados (1,024 bytes: an order of six items) is validated against a ` +
        'schema of 20 rules, and 3 active subscriptions of the type and version: each accepted event stores the event, ' +
        '3 deliveries, 3 outbox rows and its hourly counts in one transaction, and the relay publishes 3 delivery jobs with ' +
        `publisher confirms. Saturation rows: autocannon, ${CONNECTIONS} connections, ${DURATION} s (after 3 s of warm-up ` +
        'each). The bare express 5 row is one handler that only parses the same JSON (bench/publication/bare-express.ts, its own ' +
        "process): this machine's ceiling. The bare TCP relay (bench/publication/bare-tcp-relay.ts) relays bytes, one connection to " +
        'hub-api per client connection, reading no HTTP: the least any hop costs. ' +
        `The paced rows send one request every ${1000 / RATE} ms ` +
        `${LOW_RATE > 0 ? `(and every ${1000 / LOW_RATE} ms) ` : ''}for ${PACED_DURATION} s (bench/support/paced-load.ts).`,
      '',
      '| target | load | events/s | p50 ms | p99 ms | accepted | non-2xx | errors |',
      '|---|---|---:|---:|---:|---:|---:|---:|',
      ...linhas.map(
        (l) =>
          `| ${l.alvo} | ${l.carga} | ${l.eventosPorSegundo.toFixed(0)} | ${ms(l.p50)} | ${ms(l.p99)} | ${l.aceitos} | ${l.non2xx} | ${l.erros} |`,
      ),
      '',
      "CPU per accepted request, by process (from /proc: each process's user and system time during the row, " +
        "PostgreSQL's exited backends included; bench/support/cpu.ts):",
      '',
      ...linhas.map((l) => `- ${l.alvo}, ${l.carga}: ${l.cpu}`),
      '',
      `Delivery jobs: this process consumed a copy of every job (its own queue bound to ${trabalhoDeEntrega.exchange}) throughout; a job ` +
        'counts from the moment it reached that consumer (after the broker routed and stored it, so at or after its ' +
        `confirm). Paced rows: ${[principal, baixo]
          .filter((x) => x !== undefined)
          .map((x) => x.texto)
          .join('; ')}. ` +
        `Saturation rows: ${esperadosNaSaturacao} jobs expected ` +
        `(3 per accepted event), ${antesDoRitmo} distinct ids arrived before the paced row (the warm-up's included), ` +
        `${faltandoDaSaturacao} short; ${fila.repetidas()} duplicates in all.`,
      '',
      `hub-api RSS peak: ${rss.picoMb().toFixed(0)} MB (${rss.amostras()} samples of process_resident_memory_bytes, every 250 ms, ` +
        `warm-up to the end); per row: ${rss.porFase()}.`,
      '',
      'Targets:',
      `- ${gatewayRatio} (issue 19: at least 85 %; the saturation rows above and ${RATIO_ROUNDS} rotated rounds of ${RATIO_ROUND_SECONDS} s) — ${sim(gatewayMet)}; the yardsticks: ${pipeRatio}; ${relayRatio}`,
      `- hub-api directly at least 50 % of the bare ceiling: ${((100 * direto) / ceiling).toFixed(0)} % — ${sim(direto >= ceiling / 2)}`,
      `- through the gateway at a steady ${RATE} events/s, p99 under 50 ms: ${ms(ritmo.p99)} ms — ${sim(pacedOk)}`,
      `- every accepted event's jobs confirmed within ${CONFIRM_WITHIN_MS / 1000} s of its answer at ${RATE}/s: ${sim(confirmOk)}` +
        (baixo ? `; at ${LOW_RATE}/s: ${sim(baixo.confirmOk)} (p99 ${ms(baixo.r.p99)} ms)` : ''),
      `- hub-api RSS under 300 MB: ${sim(rssOk)}`,
    ].join('\n');
    log('');
    log(secao);
    await escreverSecao(secao);
    log(`\nsection "${HEADING}" written to docs/benchmarks.md`);
  } finally {
    rss?.stop();
    await fila?.close();
    bare.child.kill('SIGTERM');
    cano?.child.kill('SIGTERM');
    tcp?.child.kill('SIGTERM');
    await platform.stop();
    try {
      deleteVhost(VHOST);
    } catch {
      // rabbitmqctl absent: nothing was made
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
