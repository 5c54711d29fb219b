/**
 * Overload (issue 38): publications at three times the rate the platform accepts, and how it sheds.
 *
 * Run: BENCH_ONLY=sobrecarga pnpm bench, or npx tsx bench/overload/three-times-saturation.ts.
 * BENCH_SOBRECARGA_SECONDS: seconds of the overload (60); BENCH_SOBRECARGA_FACTOR: times the
 * saturation rate (3).
 *
 * The platform is started as `pnpm bench` does (bench/support/platform.ts) without the delivery worker (its
 * subscribers lead nowhere; bench/publication/throughput-and-latency.ts says why), with a vhost of its own.
 * First the saturation rate: closed-loop, 50 connections, 10 s, each publication with its own Idempotency-Key,
 * as @hub/client sends them. Then an open loop at FACTOR times that rate through the gateway, one
 * request every 1/rate s on a connection of its own when none is free (no client-side queue: a
 * request waits only in the platform), each with a 10 s timeout. Printed: the answer-time
 * percentiles of every request, the share answered within 2 s, 201 / 429 / 503 / other / no answer,
 * the accepted rate against the saturation rate, and the peak RSS of each process (from /proc, every
 * 500 ms). Then every accepted publication's delivery jobs are looked for in RabbitMQ (a queue bound
 * beside the work queue): an accepted event whose jobs never arrive is lost.
 *
 * BENCH_SOBRECARGA_BORDA=1: the publishers reach the platform as in production, through the edge
 * (the real nginx with infra/edge/nginx.conf, TLS, tests/platform/src/edge/nginx.ts starts it on a
 * port of its own), which sends POST /eventos on kept-alive connections to hub-api; the saturation
 * is measured through it too. Its per-client connection limit is lifted: the load comes from one
 * address, where production's comes from many.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { registrarPublicacao } from '../support/benchmark-event';
import { percentile } from '../support/paced-load';
import { obtainPlatform } from '../support/platform';
import { runSection } from '../support/report';
import { copiarTrabalhos } from '../support/delivery-job-tap';
import { type Borda, startBorda } from '../../tests/platform/src/edge/nginx';

export const HEADING = '## Overload: three times the saturation rate';
const SECONDS = Number(process.env.BENCH_SOBRECARGA_SECONDS ?? 60);
const FACTOR = Number(process.env.BENCH_SOBRECARGA_FACTOR ?? 3);
const ANSWER_WITHIN_MS = 2_000;
const CLIENT_TIMEOUT_MS = 10_000;
/**
 * BENCH_SOBRECARGA_CONEXOES: 0 (the default), every publication that finds no free connection opens
 * one of its own, so every request waits in the platform and nowhere else. N: the publishers' N
 * kept-alive connections; a publication waits for a free one in the client, and its answer time
 * counts from when it was due (no coordinated omission). With N below what the platform answers at
 * its rate with little waiting (64 at 1,000 publications/s: about 60 ms each), the platform has no
 * queue to refuse from, and the wait, and the load generator's own saturation, are the client's.
 */
const CONEXOES = Number(process.env.BENCH_SOBRECARGA_CONEXOES ?? 0);
const VHOST = 'hub-bench-sobrecarga';
const BORDA = process.env.BENCH_SOBRECARGA_BORDA === '1';

/** Where the publishers send: the gateway's URL, or the edge's with the CA its certificate is checked by. */
interface Alvo {
  url: string;
  ca?: string;
  nome: string;
}

interface Resposta {
  status: number;
  ms: number;
  entregas: string[];
  retryAfter: boolean;
  /** The load generator's own failure to send (out of file descriptors or local ports), not the platform's. */
  doCliente?: boolean;
}

const FALHAS_DO_CLIENTE = new Set(['EMFILE', 'ENFILE', 'EADDRNOTAVAIL']);

/** The parent of each process (from /proc/<pid>/stat). */
function pais(): Map<number, number> {
  const out = new Map<number, number>();
  let processos: string[];
  try {
    processos = readdirSync('/proc');
  } catch {
    // The load generator is out of file descriptors (EMFILE): this sample is skipped.
    return out;
  }
  for (const nome of processos) {
    if (!/^\d+$/.test(nome)) continue;
    try {
      const stat = readFileSync(`/proc/${nome}/stat`, 'utf8');
      out.set(Number(nome), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return out;
}

/**
 * The resident memory of each service of the platform (the processes under start.mjs's `raiz`, by
 * the service in their command line) at its peak, every 500 ms. PostgreSQL and RabbitMQ are the
 * machine's, shared with whatever else runs, and left out.
 */
function picosDeRss(raiz: number) {
  const picos = new Map<string, number>();
  const amostrar = () => {
    const agora = new Map<string, number>();
    const pai = pais();
    const daPlataforma = (pid: number): boolean => {
      for (let p: number | undefined = pid; p !== undefined && p > 1; p = pai.get(p)) if (p === raiz) return true;
      return false;
    };
    for (const pid of pai.keys()) {
      if (!daPlataforma(pid)) continue;
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
        const quem = /services\/([\w-]+)\//.exec(cmdline)?.[1];
        if (!quem) continue;
        const nome = String(pid);
        const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${nome}/status`, 'utf8'))?.[1] ?? 0);
        agora.set(quem, (agora.get(quem) ?? 0) + kb);
      } catch {
        // The process ended between the listing and the read.
      }
    }
    for (const [quem, kb] of agora) picos.set(quem, Math.max(picos.get(quem) ?? 0, kb));
  };
  const timer = setInterval(amostrar, 500);
  return {
    parar: () => clearInterval(timer),
    picos: () =>
      [...picos].sort(([a], [b]) => a.localeCompare(b)).map(([q, kb]) => `${q} ${(kb / 1024).toFixed(0)} MB`),
  };
}

/** One publication with its own Idempotency-Key; resolves with its status, answer time and deliveries. */
function publicar(url: URL, agent: http.Agent, token: string, corpo: string, devidaEm: number): Promise<Resposta> {
  return new Promise((resolve) => {
    const inicio = devidaEm;
    const req = (url.protocol === 'https:' ? https : http).request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
      },
      (res) => {
        const partes: Buffer[] = [];
        res.on('data', (p: Buffer) => partes.push(p));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const entregas =
            status === 201
              ? (JSON.parse(Buffer.concat(partes).toString()) as { entregas: { id: string }[] }).entregas.map(
                  (e) => e.id,
                )
              : [];
          resolve({
            status,
            ms: performance.now() - inicio,
            entregas,
            retryAfter: res.headers['retry-after'] !== undefined,
          });
        });
      },
    );
    // The client's 10 s count from when the publication was due, its wait for a connection included.
    const prazo = setTimeout(
      () => req.destroy(new Error('timeout')),
      Math.max(0, CLIENT_TIMEOUT_MS - (performance.now() - devidaEm)),
    );
    req.once('close', () => clearTimeout(prazo));
    req.on('error', (e: NodeJS.ErrnoException) =>
      resolve({
        status: 0,
        ms: performance.now() - inicio,
        entregas: [],
        retryAfter: false,
        doCliente: FALHAS_DO_CLIENTE.has(e.code ?? ''),
      }),
    );
    req.end(corpo);
  });
}

/** An open loop: `rate` publications a second for `seconds`, evenly spaced, whatever the answers take. */
async function lacoAberto(destino: Alvo, token: string, corpo: string, rate: number, seconds: number) {
  const sockets = { keepAlive: true, maxSockets: CONEXOES > 0 ? CONEXOES : Number.POSITIVE_INFINITY };
  const agent = destino.ca ? new https.Agent({ ...sockets, ca: destino.ca }) : new http.Agent(sockets);
  const alvo = new URL(destino.url);
  const pendentes: Promise<Resposta>[] = [];
  const total = Math.round(rate * seconds);
  const inicio = performance.now();
  await new Promise<void>((fim) => {
    const tick = () => {
      const devidas = Math.min(total, Math.floor(((performance.now() - inicio) * rate) / 1000) + 1);
      while (pendentes.length < devidas)
        pendentes.push(publicar(alvo, agent, token, corpo, inicio + (pendentes.length * 1000) / rate));
      if (pendentes.length >= total) return fim();
      setTimeout(tick, 1);
    };
    tick();
  });
  const respostas = await Promise.all(pendentes);
  agent.destroy();
  return { respostas, segundos: (performance.now() - inicio) / 1000 };
}

async function saturacao(destino: Alvo, token: string, corpo: string): Promise<number> {
  const r = await autocannon({
    url: destino.url,
    ...(destino.ca ? { tlsOptions: { ca: destino.ca } } : {}),
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: corpo,
    connections: 50,
    duration: 10,
    timeout: 10,
    requests: [
      {
        setupRequest: (req: { headers?: Record<string, string> }) => ({
          ...req,
          headers: { ...req.headers, 'idempotency-key': randomUUID() },
        }),
      },
    ],
  });
  return r['2xx'] / (r.duration || 10);
}

/**
 * When the answers over ANSWER_WITHIN_MS were due: the seconds of the run that had any, with how
 * many (a cluster at the start is the client's connections opening; spread out, the platform's).
 */
function lentasPorSegundo(respostas: Resposta[], rate: number): string {
  const porSegundo = new Map<number, number>();
  respostas.forEach((r, i) => {
    if (r.status === 0 || r.ms > ANSWER_WITHIN_MS) {
      const segundo = Math.floor(i / rate);
      porSegundo.set(segundo, (porSegundo.get(segundo) ?? 0) + 1);
    }
  });
  if (porSegundo.size === 0) return 'none';
  return [...porSegundo].map(([segundo, n]) => `${segundo} s: ${n}`).join(', ');
}

/** The answers with a status other than 201, 429 and 503, by status ("0" when there are none). */
function outros(respostas: Resposta[]): string {
  const porStatus = new Map<number, number>();
  for (const r of respostas)
    if (r.status !== 0 && ![201, 429, 503].includes(r.status))
      porStatus.set(r.status, (porStatus.get(r.status) ?? 0) + 1);
  return porStatus.size === 0 ? '0' : [...porStatus].map(([status, n]) => `${n} × ${status}`).join(', ');
}

async function esperarTrabalhos(chegadas: Map<string, number>, ids: string[], limiteMs: number): Promise<number> {
  const fim = performance.now() + limiteMs;
  for (;;) {
    const faltam = ids.filter((id) => !chegadas.has(id)).length;
    if (faltam === 0 || performance.now() > fim) return faltam;
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function sobrecarga(log: (line: string) => void): Promise<string> {
  const platform = await obtainPlatform(log, { vhost: VHOST, ownDatabasesOnly: true, without: 'delivery-worker' });
  let borda: Borda | undefined;
  try {
    if (!platform.rabbitmqUrl || platform.pid === undefined)
      throw new Error('bench/overload/three-times-saturation.ts starts its own platform');
    const { token, corpos } = await registrarPublicacao(platform, {
      criado: ['A', 'B', 'C'].map((x) => `https://recebedor.example/assinante_${x.toLowerCase()}`),
    });
    const corpo = corpos.criado;
    if (BORDA) {
      if (!platform.hubApiUrl) throw new Error('BENCH_SOBRECARGA_BORDA=1 needs the platform the benchmark starts');
      const hostDe = (url: string) => new URL(url).host;
      borda = await startBorda({
        gateway: hostDe(platform.gatewayUrl),
        hubApi: hostDe(platform.hubApiUrl),
        connPerClient: 60_000,
      });
    }
    const destino: Alvo = borda
      ? { url: `https://127.0.0.1:${borda.port}/eventos`, ca: borda.ca, nome: 'the edge (nginx, TLS) to hub-api' }
      : { url: `${platform.gatewayUrl}/eventos`, nome: 'the gateway' };
    const fila = await copiarTrabalhos(platform.rabbitmqUrl);
    log('warming up (5 s)…');
    await saturacao(destino, token, corpo);
    const saturada = await saturacao(destino, token, corpo);
    const rate = Math.round(saturada * FACTOR);
    log(`saturation through ${destino.nome}: ${saturada.toFixed(0)} publications/s; now ${rate}/s for ${SECONDS} s…`);
    const rss = picosDeRss(platform.pid!);
    const { respostas, segundos } = await lacoAberto(destino, token, corpo, rate, SECONDS);
    rss.parar();
    const tempos = respostas.map((r) => r.ms).sort((a, b) => a - b);
    const conta = (f: (r: Resposta) => boolean) => respostas.filter(f).length;
    const aceitas = respostas.filter((r) => r.status === 201);
    const ids = aceitas.flatMap((r) => r.entregas);
    const perdidas = await esperarTrabalhos(fila.chegadas, ids, 30_000);
    await fila.close();
    const share = (n: number) => `${((100 * n) / respostas.length).toFixed(1)} %`;
    const recusadas = conta((r) => r.status === 429 || r.status === 503);
    const semRetry = conta((r) => (r.status === 429 || r.status === 503) && !r.retryAfter);
    const linhas = [
      HEADING,
      '',
      `Command: \`${BORDA ? 'BENCH_SOBRECARGA_BORDA=1 ' : ''}BENCH_ONLY=sobrecarga pnpm bench\` (bench/overload/three-times-saturation.ts); ${new Date().toISOString()}, ` +
        `Node ${process.version}. Saturation through ${destino.nome} ${saturada.toFixed(0)} publications/s ` +
        `(50 connections, 10 s); then ${rate}/s (${FACTOR}×) open loop for ${SECONDS} s on ` +
        `${CONEXOES > 0 ? `${CONEXOES} kept-alive connections (answer times from when each was due)` : 'a connection per publication waiting'}, 3 subscriptions, no worker.`,
      '',
      '| figure | value | target |',
      '| --- | ---: | --- |',
      `| requests sent | ${respostas.length} | |`,
      `| answered within ${ANSWER_WITHIN_MS / 1000} s | ${share(conta((r) => r.status !== 0 && r.ms <= ANSWER_WITHIN_MS))} | 100 % |`,
      `| second of the run the slower ones were due in | ${lentasPorSegundo(respostas, rate)} | |`,
      `| answer time p50 / p99 / max | ${percentile(tempos, 50).toFixed(0)} / ${percentile(tempos, 99).toFixed(0)} / ${tempos.at(-1)?.toFixed(0)} ms | p99 ≤ 2,000 ms |`,
      `| 201 | ${share(aceitas.length)} | |`,
      `| 429 or 503 (all with Retry-After: ${semRetry === 0 ? 'yes' : `no, ${semRetry} without`}) | ${share(recusadas)} | |`,
      `| other status | ${outros(respostas)} | 0 |`,
      `| no answer within ${CLIENT_TIMEOUT_MS / 1000} s | ${conta((r) => r.status === 0 && !r.doCliente)} | 0 |`,
      `| not sent: the load generator out of file descriptors or ports | ${conta((r) => r.doCliente === true)} | |`,
      `| accepted rate | ${(aceitas.length / segundos).toFixed(0)}/s = ${((100 * aceitas.length) / segundos / saturada).toFixed(0)} % of saturation | ≥ 80 % |`,
      `| accepted events whose delivery jobs never arrived | ${perdidas === 0 ? 0 : `${perdidas} jobs`} | 0 |`,
      `| peak RSS | ${rss.picos().join(', ')} | bounded |`,
    ];
    return linhas.join('\n');
  } finally {
    await borda?.stop();
    await platform.stop();
  }
}

if (require.main === module) runSection(sobrecarga, HEADING);
