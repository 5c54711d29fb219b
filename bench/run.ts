// `pnpm bench`: GET /auth/acesso and GET /auth through the gateway at a fixed 500 requests/s and at
// max throughput, with real tokens; the table goes into docs/benchmarks.md ("Access through the gateway").
// Then the platform beside its floor (bench/floor/compare.ts: e2e events/s and machine CPU per event,
// and their ratios), written first in docs/benchmarks.md ("Current figures").
// Then a third of the subscribers failing (bench/delivery/third-of-subscribers-failing.ts, issue 19) and one
// destination's outage or burst beside healthy subscribers (bench/delivery/noisy-destination-isolation.ts,
// issue 24), each its own section. Then retention erasing an expired day of 1,000,000 events
// (bench/retention/erase-expired-day.ts, issue 19). Then tracing on against off (bench/tracing/on-and-off.ts,
// issue 21), and ordered delivery per entity beside unordered (bench/delivery/ordered-per-entity.ts, issue 20).
// Then overload at three times the saturation rate (bench/overload/three-times-saturation.ts, issue 38).
// Then a replay of 100,000 stored events beside live traffic (bench/replay/beside-live-traffic.ts, issue 40).
// Then publications while a 10,000-patternProperties schema is registered
// (bench/validation/publications-during-slow-registration.ts, issue 41).
// BENCH_ONLY=access, floor, terco, isolamento, retencao, rastreamento, ordem, sobrecarga, reproducao or esquemas runs
// that section alone; the English aliases third-failing, isolation, retention, tracing, ordering, overload and
// replay (and schemas) name the same sections (bench/README.md lists the folders and what each script measures).
// BENCH_GATEWAY_URL=http://127.0.0.1:8080 pnpm bench   uses a running platform (`pnpm start`);
// without it the benchmark starts its own (see bench/support/platform.ts). BENCH_DURATION: seconds per
// autocannon row (10); BENCH_PACED_DURATION: seconds per paced row (30).
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { isolar, SECAO as ISOLAMENTO_SECAO } from './delivery/noisy-destination-isolation';
import { HEADING as ORDEM_HEADING, ordem } from './delivery/ordered-per-entity';
import { terco, HEADING as TERCO_HEADING } from './delivery/third-of-subscribers-failing';
import { esquemas, HEADING as ESQUEMAS_HEADING } from './validation/publications-during-slow-registration';
import { compararComOChao, HEADING as FLOOR_HEADING } from './floor/compare';
import { HEADING as SOBRECARGA_HEADING, sobrecarga } from './overload/three-times-saturation';
import { HEADING as REPRODUCAO_HEADING, reproducao } from './replay/beside-live-traffic';
import { retencao, HEADING as RETENCAO_HEADING } from './retention/erase-expired-day';
import { pacedLoad } from './support/paced-load';
import { obtainPlatform, type Platform } from './support/platform';
import { publishSection, renderSection, type Row, writeSection } from './support/report';
import { HEADING as RASTREAMENTO_HEADING, rastreamento } from './tracing/on-and-off';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
/** Longer, so that one stall of the machine (a few hundred requests at most) does not decide the p99. */
const PACED_DURATION = Number(process.env.BENCH_PACED_DURATION ?? 30);
const FIXED_RATE = 500;
/** Enough that the rate is never capped by waiting connections (autocannon is closed-loop). */
const FIXED_RATE_CONNECTIONS = 25;
const TARGET_P99_MS = 20;
const log = (line: string) => process.stdout.write(`${line}\n`);

async function call<T>(method: string, url: string, token: string | undefined, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

const tokenFor = async (platform: Platform, email: string, master = false) =>
  (
    await call<{ access_token: string }>('POST', `${platform.identityUrl}/token`, undefined, {
      email,
      nome: email.split('@')[0],
      master,
    })
  ).access_token;

/** A master, and a regular user whose access profile is assigned through the API, as the panel would. */
async function prepareUsers(platform: Platform) {
  const domain = (process.env.BENCH_COMPANY_DOMAIN ?? process.env.COMPANY_DOMAIN ?? 'empresa.com.br').replace(/^@/, '');
  const run = Date.now().toString(36);
  const master = await tokenFor(platform, `bench-master@${domain}`, true);
  const api = platform.gatewayUrl;
  const acesso = await call<{ id: string }>('POST', `${api}/auth`, master, {
    email: `bench-${run}@${domain}`,
    perfil: 'colaborador',
  });
  const perfil = await call<{ id: string }>('POST', `${api}/perfil-de-acesso`, master, {
    nome: `Benchmark ${run}`,
    permissoes: { colaboradores: { ler: true }, monitoramento: { ler: true } },
  });
  await call('PATCH', `${api}/colaborador/${acesso.id}`, master, { perfil_de_acesso_id: perfil.id });
  const user = await tokenFor(platform, `bench-${run}@${domain}`);
  const atual = await call<{ perfil_acesso?: string | null }>('GET', `${api}/auth/acesso`, user);
  if (atual.perfil_acesso !== `Benchmark ${run}`)
    throw new Error(`the user's profile is ${JSON.stringify(atual.perfil_acesso)}, not the one assigned`);
  await call('GET', `${api}/auth`, user);
  return { master, user };
}

async function measure(name: string, via: string, url: string, token: string, rate?: number): Promise<Row> {
  const load = rate ? `${rate} req/s` : 'max';
  log(`  ${name} via ${via}, ${load}, autocannon, ${DURATION} s…`);
  const result = await autocannon({
    url,
    headers: { authorization: `Bearer ${token}` },
    connections: rate ? FIXED_RATE_CONNECTIONS : 50,
    duration: DURATION,
    ...(rate ? { overallRate: rate, ignoreCoordinatedOmission: true } : {}),
    timeout: 10,
  });
  return {
    route: name,
    path: via,
    load,
    tool: 'autocannon',
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

async function measurePaced(name: string, via: string, url: string, token: string): Promise<Row> {
  log(`  ${name} via ${via}, ${FIXED_RATE} req/s, paced, ${PACED_DURATION} s…`);
  const result = await pacedLoad(url, { authorization: `Bearer ${token}` }, FIXED_RATE, PACED_DURATION);
  const slowest = result.slowest.slice(0, 5).map(([at, ms]) => `${ms.toFixed(0)} ms at ${at.toFixed(1)} s`);
  log(`    p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms; slowest: ${slowest.join(', ')}`);
  return {
    route: name,
    path: via,
    load: `${FIXED_RATE} req/s`,
    tool: 'paced',
    requestsPerSecond: result.requestsPerSecond,
    p50: result.p50,
    p99: result.p99,
    total: result.sent,
    non2xx: result.non2xx,
    errors: result.failed,
  };
}

async function accessSection() {
  const loadBefore = os.loadavg()[0]!;
  const platform = await obtainPlatform(log);
  try {
    log(`platform: ${platform.mode}`);
    const { user } = await prepareUsers(platform);
    // Warm the caches, connection pools and the JIT of every process on the path before measuring.
    const warmUrls = [
      `${platform.gatewayUrl}/auth/acesso`,
      `${platform.gatewayUrl}/auth`,
      ...(platform.accessUrl ? [`${platform.accessUrl}/auth/acesso`] : []),
    ];
    for (const url of warmUrls) {
      await autocannon({ url, headers: { authorization: `Bearer ${user}` }, connections: 10, duration: 3 });
      await pacedLoad(url, { authorization: `Bearer ${user}` }, FIXED_RATE, 3);
    }
    const rows: Row[] = [];
    for (const route of ['/auth/acesso', '/auth']) {
      const url = `${platform.gatewayUrl}${route}`;
      rows.push(await measurePaced(`GET ${route}`, 'gateway', url, user));
      rows.push(await measure(`GET ${route}`, 'gateway', url, user, FIXED_RATE));
      rows.push(await measure(`GET ${route}`, 'gateway', url, user));
    }
    if (platform.accessUrl) {
      // The same route without the gateway, to show what the extra hop costs.
      rows.push(await measurePaced('GET /auth/acesso', 'access directly', `${platform.accessUrl}/auth/acesso`, user));
      rows.push(await measure('GET /auth/acesso', 'access directly', `${platform.accessUrl}/auth/acesso`, user));
    }
    const target = rows.find((r) => r.route === 'GET /auth/acesso' && r.path === 'gateway' && r.tool === 'paced')!;
    const targetMet = target.p99 < TARGET_P99_MS && target.non2xx === 0 && target.errors === 0;
    const command = process.env.BENCH_GATEWAY_URL
      ? `BENCH_GATEWAY_URL=${process.env.BENCH_GATEWAY_URL} pnpm bench`
      : 'pnpm bench';
    const section = renderSection(rows, {
      command,
      mode: platform.mode,
      durationSeconds: DURATION,
      pacedSeconds: PACED_DURATION,
      targetMet,
      loadBefore,
    });
    const file = path.resolve(__dirname, '..', 'docs', 'benchmarks.md');
    writeSection(file, section);
    log(`\n${section}`);
    log(`written to ${path.relative(process.cwd(), file)}`);
    if (rows.some((r) => r.non2xx > 0 || r.errors > 0))
      log('warning: some requests failed (non-2xx or errors); see the table');
  } finally {
    await platform.stop();
  }
}

async function floorSection() {
  log('the platform beside its floor (bench/floor/compare.ts)');
  const { secao } = await compararComOChao(log);
  publishSection(secao, FLOOR_HEADING, log, { top: true });
}

/** The sections in the order `pnpm bench` runs them. */
const SECTIONS: Record<string, () => Promise<void>> = {
  access: accessSection,
  floor: floorSection,
  terco: async () => {
    log('a third of the subscribers failing (bench/delivery/third-of-subscribers-failing.ts)');
    publishSection(await terco(log), TERCO_HEADING, log);
  },
  isolamento: async () => {
    log("one destination's outage or burst beside healthy subscribers (bench/delivery/noisy-destination-isolation.ts)");
    publishSection(await isolar(log), ISOLAMENTO_SECAO, log);
  },
  retencao: async () => {
    log('retention erasing an expired day of 1,000,000 events (bench/retention/erase-expired-day.ts)');
    publishSection(await retencao(log), RETENCAO_HEADING, log);
  },
  rastreamento: async () => {
    log('tracing on against off (bench/tracing/on-and-off.ts)');
    publishSection(await rastreamento(log), RASTREAMENTO_HEADING, log);
  },
  ordem: async () => {
    log('ordered delivery per entity beside unordered (bench/delivery/ordered-per-entity.ts)');
    publishSection(await ordem(log), ORDEM_HEADING, log);
  },
  sobrecarga: async () => {
    log('three times the saturation rate through the gateway (bench/overload/three-times-saturation.ts)');
    publishSection(await sobrecarga(log), SOBRECARGA_HEADING, log);
  },
  reproducao: async () => {
    log('a replay of stored events beside live traffic (bench/replay/beside-live-traffic.ts)');
    publishSection(await reproducao(log), REPRODUCAO_HEADING, log);
  },
  esquemas: async () => {
    log('publications while a slow schema is registered (bench/validation/publications-during-slow-registration.ts)');
    publishSection(await esquemas(log), ESQUEMAS_HEADING, log);
  },
};

/** English names for the sections whose BENCH_ONLY word is Portuguese; both select the same section. */
const ALIASES: Record<string, string> = {
  'third-failing': 'terco',
  isolation: 'isolamento',
  retention: 'retencao',
  tracing: 'rastreamento',
  ordering: 'ordem',
  overload: 'sobrecarga',
  schemas: 'esquemas',
  replay: 'reproducao',
};

async function main() {
  const asked = process.env.BENCH_ONLY;
  const only = asked ? (ALIASES[asked] ?? asked) : undefined;
  if (only && !(only in SECTIONS))
    throw new Error(
      `BENCH_ONLY is one of ${[...Object.keys(SECTIONS), ...Object.keys(ALIASES)].join(', ')}, not ${asked}`,
    );
  log(`Node ${process.version} (${process.execPath})`);
  // Production runs Node 24, and a regression of its own went unseen while every run here used the
  // machine's Node 20 (docs/decisions/v8-heap-settings.md).
  if (!process.version.startsWith('v24.'))
    log(
      'warning: production runs Node 24; put it first on PATH as .ci/run does, or these figures describe another runtime',
    );
  for (const [name, section] of Object.entries(SECTIONS)) if (!only || only === name) await section();
}

main().catch((error) => {
  process.stderr.write(`benchmark failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
