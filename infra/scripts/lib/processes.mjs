// Child processes of `pnpm start`: spawned with the caller's environment, each log line prefixed with
// the service name, the last lines kept for error reports, stopped with SIGTERM then SIGKILL.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const COLORS = [36, 33, 35, 32, 34, 96, 93, 95];
const LEVELS = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const OMIT = new Set(['level', 'time', 'msg', 'service', 'name', 'pid', 'hostname']);
const color = (code, text) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[${code}m${text}\x1b[0m` : text);

/** pino JSON to one readable line; START_LOG_FORMAT=json keeps the raw JSON. */
export function formatLine(line) {
  if (process.env.START_LOG_FORMAT === 'json' || !line.startsWith('{')) return line;
  try {
    const entry = JSON.parse(line);
    if (typeof entry.msg !== 'string') return line;
    const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
    const extra = Object.entries(entry)
      .filter(([key]) => !OMIT.has(key))
      .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
      .join(' ');
    const level = LEVELS[entry.level] ?? String(entry.level);
    const painted = entry.level >= 50 ? color(31, level) : entry.level >= 40 ? color(33, level) : level;
    return `${time} ${painted} ${entry.msg}${extra ? ` ${color(90, extra)}` : ''}`;
  } catch {
    return line;
  }
}

export class Child {
  /** @param {{ name: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, index: number, width: number }} options */
  constructor({ name, args, cwd, env, index, width }) {
    this.name = name;
    this.lastLines = [];
    this.prefix = color(COLORS[index % COLORS.length], `${name.padEnd(width)} |`);
    this.process = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code, signal) => resolve({ code, signal }));
      this.process.once('error', (error) => {
        this.#remember(`could not start: ${error.message}`);
        resolve({ code: 1, signal: null });
      });
    });
    for (const stream of [this.process.stdout, this.process.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        this.#remember(line);
        process.stdout.write(`${this.prefix} ${formatLine(line)}\n`);
      });
    }
  }

  #remember(line) {
    this.lastLines.push(line);
    if (this.lastLines.length > 30) this.lastLines.shift();
  }

  get running() {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /** SIGTERM, then SIGKILL when it is still there after `graceMs`. */
  async stop(graceMs) {
    if (!this.running) return;
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (this.running) {
        process.stdout.write(`${this.prefix} did not stop within ${graceMs / 1000} s; sending SIGKILL\n`);
        this.process.kill('SIGKILL');
      }
    }, graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
