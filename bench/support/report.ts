import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Row {
  route: string;
  path: string;
  load: string;
  tool: 'paced' | 'autocannon';
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
}

export const HEADING = '## Access through the gateway';

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : '–');

export function renderSection(
  rows: Row[],
  info: {
    command: string;
    mode: string;
    durationSeconds: number;
    pacedSeconds: number;
    targetMet: boolean | undefined;
    loadBefore: number;
  },
): string {
  const cpus = os.cpus();
  const lines = [
    HEADING,
    '',
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ` +
      `Node ${process.version}, loopback only, ${info.pacedSeconds} s per paced row and ${info.durationSeconds} s per autocannon row; load average before the run ${info.loadBefore.toFixed(2)} ` +
      '(the platform, the load generator and anything else on the machine share these CPUs).',
    'Tools: `paced` sends one request every 2 ms (open loop, evenly spaced: the latency at a steady 500 requests/s); ' +
      "`autocannon` at a rate (`overallRate`, 25 connections) sends each connection's share of a second back to back at the " +
      'start of the second, so its latencies are those of bursts of 25 concurrent requests; `autocannon` max uses 50 connections. ' +
      "autocannon's coordinated-omission correction is off (in rate mode it assumes a 1 ms interval and invents samples).",
    `Platform: ${info.mode}. Tokens are real (identity-dev); the user has an access profile assigned through the API`,
    '(POST /auth, POST /perfil-de-acesso, PATCH /colaborador/:id).',
    '',
    '```',
    info.command,
    '```',
    '',
    '| route | path | load | tool | requests/s | p50 ms | p99 ms | requests | non-2xx | errors |',
    '|---|---|---|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.route} | ${r.path} | ${r.load} | ${r.tool} | ${Math.round(r.requestsPerSecond)} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.total} | ${r.non2xx} | ${r.errors} |`,
    ),
    '',
    ...overheadLine(rows),
    'Single stalls of a shared machine (tens of ms) reach a few hundred requests at most, which is why the paced rows run longer; ' +
      'run-to-run differences of the p99 on a busy 2-CPU machine are large, so compare rows of one run.',
    '',
    info.targetMet === undefined
      ? 'Target (GET /auth/acesso p99 under 20 ms at 500 requests/s through the gateway): not measured.'
      : `Target (GET /auth/acesso p99 under 20 ms at a steady 500 requests/s through the gateway, the paced row): **${info.targetMet ? 'met' : 'NOT met'}**.`,
    '',
  ];
  return lines.join('\n');
}

/** What the gateway hop adds, from the paced rows of /auth/acesso through it and without it. */
function overheadLine(rows: Row[]): string[] {
  const paced = (path: string) =>
    rows.find((r) => r.route === 'GET /auth/acesso' && r.tool === 'paced' && r.path === path);
  const via = paced('gateway');
  const direct = paced('access directly');
  if (!via || !direct) return [];
  return [
    `The gateway hop adds ${ms(via.p50 - direct.p50)} ms at the median and ${ms(via.p99 - direct.p99)} ms at p99 (paced rows of GET /auth/acesso).`,
    '',
  ];
}

/**
 * Replaces the section under `heading` of docs/benchmarks.md (other sections stay as they are); a
 * section not there yet is appended, or with `top` put first, right under the title.
 */
export function writeSection(file: string, section: string, heading = HEADING, { top = false } = {}): void {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = '# Benchmarks\n\n';
  }
  const start = text.indexOf(`${heading}\n`);
  if (start === -1) {
    const first = text.indexOf('\n## ');
    if (top && first !== -1)
      writeFileSync(file, `${text.slice(0, first + 1)}${section.trimEnd()}\n\n${text.slice(first + 1)}`);
    else writeFileSync(file, `${text.trimEnd()}\n\n${section}`);
    return;
  }
  const next = text.indexOf('\n## ', start + heading.length);
  const end = next === -1 ? text.length : next + 1;
  writeFileSync(file, `${text.slice(0, start)}${section}${next === -1 ? '' : '\n'}${text.slice(end)}`);
}

/** Writes a benchmark's section under its heading of docs/benchmarks.md, and prints it. */
export function publishSection(
  section: string,
  heading: string,
  log: (line: string) => void,
  options: { top?: boolean } = {},
): void {
  const file = path.resolve(__dirname, '..', '..', 'docs', 'benchmarks.md');
  writeSection(file, section, heading, options);
  log(`\n${section}`);
  log(`written to ${path.relative(process.cwd(), file)}`);
}

/** A section's script run on its own (`npx tsx bench/<folder>/<name>.ts`): measures, publishes, exits 1 on failure. */
export function runSection(measure: (log: (line: string) => void) => Promise<string>, heading: string): void {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  measure(log)
    .then((section) => publishSection(section, heading, log))
    .catch((error) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    });
}
