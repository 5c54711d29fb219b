import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { serviceCommand, serviceOfMain } from './bundle';
import { waitFor } from './wait';

const ROOT = path.resolve(__dirname, '../../..');

export interface SpawnedService {
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
  /** The URL of its "<service> listening" log line. */
  url(service: string, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (for a teardown after a failed test), resolved once it is gone and its pipes are closed. */
  kill(): Promise<void>;
}

/**
 * Runs a service's main.ts as the platform runs it: one node process on the service's bundle
 * (serviceCommand; any other script with the tsx loader), so a signal reaches main itself, JSON logs
 * at info. For the tests of start-up and clean shutdown.
 */
export function spawnService(mainFile: string, env: NodeJS.ProcessEnv): SpawnedService {
  const service = serviceOfMain(mainFile);
  const args = service ? serviceCommand(service) : ['--import', 'tsx', mainFile];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  // 'close', not 'exit': only then are its stdout and stderr pipes closed too (no handle left open).
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    url: (service, timeoutMs = 25_000) =>
      waitFor(() => new RegExp(`"url":"(http://[^"]+)".*${service} listening`).exec(output)?.[1], {
        timeoutMs,
        what: `${service} listening`,
      }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
