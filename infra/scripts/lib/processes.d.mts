// Types of processes.mjs for the TypeScript that tests it.
export function formatLine(line: string): string;

export interface Exit {
  code: number | null;
  signal: string | null;
}

export class Child {
  constructor(options: {
    name: string;
    args: string[];
    cwd: string;
    env: NodeJS.ProcessEnv;
    index: number;
    width: number;
  });
  readonly name: string;
  readonly lastLines: string[];
  readonly process: import('node:child_process').ChildProcess;
  readonly exited: Promise<Exit>;
  get running(): boolean;
  stop(graceMs: number): Promise<void>;
}

export class Supervised {
  constructor(options: {
    name: string;
    start: () => Child;
    say: (text: string) => void;
    onFailedStart: (exit: Exit) => void;
    /** Resolves once a restarted process answers its readiness: the restart is then logged as back. */
    waitReady?: (child: Child) => Promise<void>;
    firstDelayMs?: number;
    maxDelayMs?: number;
    stableMs?: number;
  });
  readonly name: string;
  readonly restarts: number;
  readonly child: Child;
  get running(): boolean;
  get lastLines(): string[];
  markReady(): void;
  stop(graceMs: number): Promise<void>;
}
