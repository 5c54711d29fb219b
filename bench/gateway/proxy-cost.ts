// The gateway's own cost per proxied request (issue 19), in one run: the ~1 KiB benchmark event POSTed
// at saturation (autocannon, 50 connections) to a service that does nothing (bench/gateway/no-op-service.ts),
// directly, through the least proxy node:http makes (bench/gateway/bare-http-proxy.ts) and through the gateway
// (its bundle, as `pnpm start` runs it, with a real application token: the rate limit verifies it once and
// then finds it in its cache). Each its own process; CPU from /proc per process (bench/support/cpu.ts).
//
//   npx tsx bench/gateway/proxy-cost.ts
//
// BENCH_DURATION: seconds per row (10). BENCH_GATEWAY_ROUNDS: rounds of the rows (2; the figures
// printed are each row's best round, since other work on the machine only slows a row).
// BENCH_GATEWAY_OTHER=<another checkout, installed>: one more row, that checkout's gateway (e.g. an
// older commit, `git archive <commit> | tar -x -C <dir>` and `pnpm install` there), for a before
// and after in one run.
// BENCH_GATEWAY_FLAGS / BENCH_GATEWAY_OTHER_FLAGS: node flags for this checkout's gateway / the other
// one (e.g. --max-semi-space-size=32). BENCH_GATEWAY_RATE=<requests/s>: every row at that fixed rate
// instead of at saturation. The median CPU per request of each row over the rounds is printed too.
// BENCH_GATEWAY_SIDE_BY_SIDE=<requests/s>: the gateway and the other checkout's (or, without one, the
// bare pipe) loaded at the same time at that rate each, round after round, printing the ratio of
// their CPU per request: the machine's speed drifts by 10-20 % within a minute here, and a change
// of a few per cent is only seen when both sides run under the same drift.
// BENCH_GATEWAY_UNIX=1: the service serves a Unix socket too, and two more rows reach it there, as
// `pnpm start` has the gateway reach the services on one host: the bare pipe and this checkout's
// gateway (HUB_API_URL=unix:…; it is then the "other" of BENCH_GATEWAY_SIDE_BY_SIDE).
// BENCH_GATEWAY_LATENCY=<requests>: instead, that many requests one at a time per target and round,
// unloaded, and the time each proxy adds to the median directly (latencias).
// With NODE_OPTIONS="--require $PWD/bench/profiling/cpu-profile.cjs" BENCH_PROFILE_SERVICES=gateway the gateway
// writes a CPU profile at exit. Prints its figures; writes nothing.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startTestIdentity } from '../../packages/testing/src';
import { contarCpu, cpuPorUnidade, segundosDeCpu } from '../support/cpu';
import { dadosDe1KiB } from '../support/benchmark-event';
import { percentile } from '../support/paced-load';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_GATEWAY_ROUNDS ?? 2);
const RATE = Number(process.env.BENCH_GATEWAY_RATE ?? 0);
const LADO_A_LADO = Number(process.env.BENCH_GATEWAY_SIDE_BY_SIDE ?? 0);
const LATENCIA = Number(process.env.BENCH_GATEWAY_LATENCY ?? 0);
const CONNECTIONS = 50;
const UNIX = process.env.BENCH_GATEWAY_UNIX === '1';
/** The name of the other gateway's rows. */
const OTHER = UNIX ? 'gateway over a Unix socket' : `gateway of ${process.env.BENCH_GATEWAY_OTHER}`;
const root = path.resolve(__dirname, '../..');
const log = (line: string) => process.stdout.write(`${line}\n`);
const flagsDe = (variavel: string) => (process.env[variavel] ?? '').split(' ').filter(Boolean);

/** A bench script in its own process; resolves with the port it prints. */
function startScript(script: string, args: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, script), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) =>
      resolve({ url: `http://127.0.0.1:${chunk.toString().trim()}`, child }),
    );
    child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
}

/** The gateway's bundle of checkout `dir`, built now, in front of `hubApiUrl` only; resolves with its URL from its log. */
async function startGateway(dir: string, hubApiUrl: string, identityEnv: Record<string, string>, flags: string[] = []) {
  execFileSync(process.execPath, [path.join(dir, 'infra/scripts/build.mjs'), 'gateway'], { cwd: dir });
  const child = spawn(process.execPath, [...flags, path.join(dir, 'services/gateway/dist/main.js')], {
    cwd: dir,
    env: {
      ...process.env,
      ...identityEnv,
      GATEWAY_PORT: '0',
      GATEWAY_METRICS_PORT: '0',
      GATEWAY_UPSTREAMS: 'hub-api',
      HUB_API_URL: hubApiUrl,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      RATE_LIMIT_USER_PER_MINUTE: '1000000000',
      RATE_LIMIT_APPLICATION_PER_MINUTE: '1000000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const found = /"url":"(http:\/\/[^"]+)"[^\n]*gateway listening/.exec(output)?.[1];
      if (found) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}): ${output.slice(-2000)}`)));
  });
  return { url, child };
}

interface Linha {
  nome: string;
  porSegundo: number;
  p50: number;
  p99: number;
  /** CPU ms per request of the process in the middle (the proxy), 0 directly. */
  proxyMs: number;
  cpu: string;
  falhas: number;
}

async function medir(nome: string, url: string, classe: string | undefined, token: string, corpo: string) {
  const cpu = contarCpu();
  const r = await autocannon({
    url: `${url}/eventos`,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: corpo,
    connections: CONNECTIONS,
    duration: DURATION,
    timeout: 10,
    ...(RATE > 0 ? { overallRate: RATE } : {}),
  });
  const conta = cpu.fim();
  const feitos = r['2xx'];
  const segundos = classe ? (conta.porClasse.find(([c]) => c === classe)?.[1] ?? 0) : 0;
  const linha: Linha = {
    nome,
    porSegundo: feitos / (r.duration || DURATION),
    p50: r.latency.p50,
    p99: r.latency.p99,
    proxyMs: (segundos * 1000) / Math.max(1, feitos),
    cpu: cpuPorUnidade(conta, feitos),
    falhas: r.non2xx + r.errors + r.timeouts,
  };
  log(
    `  ${nome}: ${linha.porSegundo.toFixed(0)}/s, p50 ${linha.p50} ms, p99 ${linha.p99} ms, failed ${linha.falhas}` +
      (classe ? `; ${classe} ${linha.proxyMs.toFixed(3)} ms CPU per request` : ''),
  );
  log(`    CPU per request: ${linha.cpu}`);
  return linha;
}

const cpuDe = (child: ChildProcess) => segundosDeCpu(child.pid!);

/**
 * The time each hop adds, unloaded: LATENCIA requests one after the other on one kept-alive
 * connection per target, each timed from the request's start to its answer's end, the targets taking
 * turns round by round; the median and 90th percentile per target in µs, and how much each proxy
 * adds to the median directly. What a proxy costs a closed loop beyond its CPU shows here.
 */
async function latencias(alvos: { nome: string; url: string }[], token: string, corpo: string) {
  const agentes = new Map(alvos.map((a) => [a.nome, new http.Agent({ keepAlive: true, maxSockets: 1 })]));
  const um = (alvo: { nome: string; url: string }) =>
    new Promise<number>((resolve, reject) => {
      const inicio = process.hrtime.bigint();
      const pedido = http.request(
        `${alvo.url}/eventos`,
        {
          method: 'POST',
          agent: agentes.get(alvo.nome),
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(Number(process.hrtime.bigint() - inicio) / 1000));
        },
      );
      pedido.on('error', reject);
      pedido.end(corpo);
    });
  const tempos = new Map<string, number[]>(alvos.map((a) => [a.nome, []]));
  for (let rodada = 1; rodada <= ROUNDS; rodada++)
    for (const alvo of alvos) for (let i = 0; i < LATENCIA; i++) tempos.get(alvo.nome)!.push(await um(alvo));
  const ordenados = new Map([...tempos].map(([nome, xs]) => [nome, xs.sort((a, b) => a - b)]));
  const direto = percentile(ordenados.get('directly')!, 50);
  for (const [nome, xs] of ordenados)
    log(
      `  ${nome}: median ${percentile(xs, 50).toFixed(0)} µs, p90 ${percentile(xs, 90).toFixed(0)} µs` +
        (nome === 'directly' ? '' : `; adds ${(percentile(xs, 50) - direto).toFixed(0)} µs to the median directly`),
    );
  for (const agente of agentes.values()) agente.destroy();
}

/**
 * Both gateways loaded at once, at the same fixed rate, each by its own 25 connections: the
 * machine's speed, which drifts by 10-20 % within a minute on these shared VMs, then weighs on both
 * alike, and the ratio of their CPU per request is what a change did.
 */
async function ladoALado(a: ChildProcess, b: ChildProcess, urlA: string, urlB: string, token: string, corpo: string) {
  const carga = (url: string) =>
    autocannon({
      url: `${url}/eventos`,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: corpo,
      connections: CONNECTIONS / 2,
      duration: DURATION,
      timeout: 10,
      overallRate: LADO_A_LADO,
    });
  const razoes: number[] = [];
  for (let rodada = 1; rodada <= ROUNDS; rodada++) {
    const [antesA, antesB] = [cpuDe(a), cpuDe(b)];
    const [ra, rb] = await Promise.all([carga(urlA), carga(urlB)]);
    const msA = ((cpuDe(a) - antesA) * 1000) / Math.max(1, ra['2xx']);
    const msB = ((cpuDe(b) - antesB) * 1000) / Math.max(1, rb['2xx']);
    razoes.push(msA / msB);
    log(
      `round ${rodada}: gateway ${msA.toFixed(3)} ms (${ra['2xx']} answered), ` +
        `other ${msB.toFixed(3)} ms (${rb['2xx']}); gateway / other ${(msA / msB).toFixed(3)}`,
    );
  }
  // The first round warms the gateways' code up further (the warm-up rows are short): left out when there are more.
  const ordenadas = (razoes.length > 2 ? razoes.slice(1) : razoes).sort((x, y) => x - y);
  log(
    `median gateway / other (from round ${razoes.length > 2 ? 2 : 1}): ${ordenadas[Math.floor(ordenadas.length / 2)]!.toFixed(3)}`,
  );
}

async function main() {
  log(`load average ${os.loadavg()[0]!.toFixed(2)}`);
  const identity = await startTestIdentity();
  const socket = path.join(os.tmpdir(), `bench-no-op-service-${process.pid}.sock`);
  const servico = await startScript('no-op-service.ts', UNIX ? [socket] : []);
  const cano = await startScript('bare-http-proxy.ts', [servico.url]);
  const canoUnix = UNIX ? await startScript('bare-http-proxy.ts', [`unix:${socket}`]) : undefined;
  const gateway = await startGateway(root, servico.url, identity.env, flagsDe('BENCH_GATEWAY_FLAGS'));
  const other = UNIX
    ? await startGateway(root, `unix:${socket}`, identity.env, flagsDe('BENCH_GATEWAY_FLAGS'))
    : process.env.BENCH_GATEWAY_OTHER
      ? await startGateway(
          path.resolve(process.env.BENCH_GATEWAY_OTHER),
          servico.url,
          identity.env,
          flagsDe('BENCH_GATEWAY_OTHER_FLAGS'),
        )
      : undefined;
  try {
    const token = await identity.appToken('bench-gateway');
    const corpo = JSON.stringify({
      tipo: 'pedido.criado',
      versao_do_esquema: 1,
      entidade_id: 'P-1',
      dados: dadosDe1KiB(),
    });
    const alvos = [
      { nome: 'directly', url: servico.url, classe: undefined },
      { nome: 'bare node:http pipe', url: cano.url, classe: 'bench/gateway/bare-http-proxy' },
      { nome: 'gateway', url: gateway.url, classe: 'gateway' },
      ...(canoUnix
        ? [
            {
              nome: 'bare node:http pipe over a Unix socket',
              url: canoUnix.url,
              classe: 'bench/gateway/bare-http-proxy',
            },
          ]
        : []),
      ...(other ? [{ nome: OTHER, url: other.url, classe: 'gateway' }] : []),
    ];
    for (const alvo of alvos)
      await autocannon({
        url: `${alvo.url}/eventos`,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: corpo,
        connections: 10,
        duration: 3,
      });
    if (LATENCIA > 0) return await latencias(alvos, token, corpo);
    if (LADO_A_LADO > 0) {
      const b = other ?? cano;
      return await ladoALado(gateway.child, b.child, gateway.url, b.url, token, corpo);
    }
    const melhores = new Map<string, Linha>();
    const todas = new Map<string, number[]>();
    for (let rodada = 1; rodada <= ROUNDS; rodada++) {
      log(`round ${rodada} of ${ROUNDS} (load average ${os.loadavg()[0]!.toFixed(2)}), ${DURATION} s per row:`);
      for (const alvo of alvos) {
        const linha = await medir(alvo.nome, alvo.url, alvo.classe, token, corpo);
        todas.set(alvo.nome, [...(todas.get(alvo.nome) ?? []), linha.proxyMs]);
        const antes = melhores.get(alvo.nome);
        if (!antes || linha.porSegundo > antes.porSegundo) melhores.set(alvo.nome, linha);
      }
    }
    const mediana = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const [nome, xs] of todas)
      if (nome !== 'directly')
        log(`median CPU per request, ${nome}: ${mediana(xs).toFixed(3)} ms (${xs.map((x) => x.toFixed(3)).join(' ')})`);
    const direto = melhores.get('directly')!;
    const cano_ = melhores.get('bare node:http pipe')!;
    const gw = melhores.get('gateway')!;
    log('');
    log(
      `best of ${ROUNDS} rounds: directly ${direto.porSegundo.toFixed(0)}/s, bare pipe ${cano_.porSegundo.toFixed(0)}/s, gateway ${gw.porSegundo.toFixed(0)}/s`,
    );
    log(
      `gateway CPU per proxied request: ${gw.proxyMs.toFixed(3)} ms; bare node:http pipe ${cano_.proxyMs.toFixed(3)} ms; ` +
        `gateway / pipe = ${(gw.proxyMs / cano_.proxyMs).toFixed(2)}×`,
    );
    if (other) {
      const antes = melhores.get(OTHER)!;
      log(
        `${OTHER}: ${antes.porSegundo.toFixed(0)}/s, ` +
          `${antes.proxyMs.toFixed(3)} ms CPU per proxied request (${(antes.proxyMs / cano_.proxyMs).toFixed(2)}× the pipe)`,
      );
    }
  } finally {
    other?.child.kill('SIGTERM');
    canoUnix?.child.kill('SIGTERM');
    gateway.child.kill('SIGTERM');
    cano.child.kill('SIGTERM');
    servico.child.kill('SIGTERM');
    await identity.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
