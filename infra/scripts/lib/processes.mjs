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

/**
 * One service of `pnpm start`, kept running: a service that exits unexpectedly after it was ready
 * is started again after a pause that doubles from `firstDelayMs` to `maxDelayMs` (back to the
 * first once it has stayed up for `stableMs`), each restart logged with its exit and last lines.
 * One that exits before it was ever ready (a broken configuration) calls `onFailedStart` instead:
 * restarting cannot help it. Given `waitReady` (resolves once the new process answers its
 * readiness), each restart that comes back is logged too, with how long the service was away.
 */
export class Supervised {
  /**
   * @param {{ name: string, start: () => Child, say: (text: string) => void, onFailedStart: (exit: { code: number | null, signal: string | null }) => void,
   *   waitReady?: (child: Child) => Promise<void>, firstDelayMs?: number, maxDelayMs?: number, stableMs?: number }} options
   */
  constructor(options) {
    this.options = { firstDelayMs: 1_000, maxDelayMs: 30_000, stableMs: 60_000, ...options };
    this.name = options.name;
    this.restarts = 0;
    this.ready = false;
    this.stopped = false;
    this.delayMs = this.options.firstDelayMs;
    this.#launch();
  }

  /** The process running now (a new one after each restart). */
  get running() {
    return this.child.running;
  }

  get lastLines() {
    return this.child.lastLines;
  }

  /** Called once the service answered its readiness: from now on an exit means a restart. */
  markReady() {
    this.ready = true;
  }

  /** No more restarts; stops the process running now (SIGTERM, then SIGKILL after `graceMs`). */
  async stop(graceMs) {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.child.stop(graceMs);
  }

  #launch() {
    const child = this.options.start();
    const startedAt = Date.now();
    this.child = child;
    child.exited.then((exit) => {
      if (this.stopped || this.child !== child) return;
      if (!this.ready) {
        this.options.onFailedStart(exit);
        return;
      }
      if (Date.now() - startedAt >= this.options.stableMs) this.delayMs = this.options.firstDelayMs;
      const delay = this.delayMs;
      this.delayMs = Math.min(this.options.maxDelayMs, this.delayMs * 2);
      this.restarts += 1;
      const how = exit.signal ?? `code ${exit.code}`;
      this.options.say(
        `✗ ${this.name} exited unexpectedly (${how}); restarting in ${delay / 1000} s (restart ${this.restarts})\n` +
          child.lastLines
            .slice(-10)
            .map((l) => `    ${formatLine(l)}`)
            .join('\n'),
      );
      const exitedAt = Date.now();
      const restart = this.restarts;
      this.timer = setTimeout(() => {
        if (this.stopped) return;
        const next = this.#launch();
        this.options.waitReady?.(next).then(
          () => {
            if (!this.stopped && this.child === next && next.running)
              this.options.say(
                `✓ ${this.name} ready again (restart ${restart}, ${((Date.now() - exitedAt) / 1000).toFixed(1)} s after it exited)`,
              );
          },
          () => undefined, // it died again or never answered: its exit is what gets logged
        );
      }, delay);
    });
    return child;
  }
}
