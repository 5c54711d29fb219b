import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { serviceCommand } from '@hub/testing';

const ROOT = path.resolve(__dirname, '../../..');
/** Enough of a service's log to explain a failure, without keeping every warn line of a long sweep. */
const KEPT_OUTPUT = 64 * 1024;

export interface ServiceProcess {
  name: string;
  /** Its process id (a fault test checks that a service is still the same process afterwards). */
  pid: number;
  /** Where it listens, from its "<name> listening" log line (it binds port 0 unless told otherwise). */
  url: string;
  /** The last lines it wrote, stdout and stderr. */
  output(): string;
  /** True while the process runs. */
  running(): boolean;
  /** SIGTERM, then its exit code (null when a signal ended it). */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash: nothing of it runs on), resolved once it is gone. */
  kill(): Promise<void>;
}

export class ServiceStartError extends Error {
  override name = 'ServiceStartError';
}

/**
 * Runs the service exactly as `pnpm start` does (node on its bundle: serviceCommand in @hub/testing,
 * so the signal reaches main itself), waits for its "listening" line and then for GET /saude/prontidao 200.
 * A process that exits or is not ready within `timeoutMs` is killed and reported with its last output.
 */
export async function startServiceProcess(
  name: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, serviceCommand(name), {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let url: string | undefined;
  const listening = new RegExp(`"url":"(http://[^"]+)".*"msg":"${name} listening`);
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-KEPT_OUTPUT);
    url ??= listening.exec(output)?.[1];
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const service: ServiceProcess = {
    name,
    pid: child.pid ?? -1,
    get url() {
      return url ?? '';
    },
    output: () => output,
    running: () => child.exitCode === null && child.signalCode === null,
    stop: async () => {
      if (service.running()) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (service.running()) child.kill('SIGKILL');
      await exited;
    },
  };

  try {
    await untilReady(service, () => url, timeoutMs);
    return service;
  } catch (error) {
    await stopHard(child, exited);
    throw new ServiceStartError(`${name}: ${(error as Error).message}\n--- last output of ${name} ---\n${output}`);
  }
}

async function untilReady(service: ServiceProcess, url: () => string | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no "listening" line yet';
  while (Date.now() < deadline) {
    if (!service.running()) throw new Error('exited before it was ready');
    const base = url();
    if (base) {
      try {
        const response = await fetch(`${base}/saude/prontidao`, { signal: AbortSignal.timeout(2000) });
        if (response.status === 200) return;
        last = `prontidao ${response.status} ${(await response.text()).slice(0, 300)}`;
      } catch (error) {
        last = (error as Error).message;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not ready within ${timeoutMs} ms (last: ${last})`);
}

async function stopHard(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
