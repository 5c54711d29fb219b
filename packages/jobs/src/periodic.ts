import type { Logger } from '@hub/log';

/** What a run sees of its job: whether it was stopped, so a long run ends after its current batch. */
export interface RunContext {
  readonly stopped: boolean;
}

interface Common<T> {
  /** Names the job in its log lines (e.g. 'sweeper'). */
  name: string;
  logger: Logger;
  /** One run. A run that throws is logged; the next one comes on time. */
  run: (job: RunContext) => Promise<T>;
}

/**
 * How runs are spaced: `everyMs` from the start of one run to the start of the next ("how often": a
 * cache read again, a row kept alive for so many periods), or `pauseMs` from the end of one run to
 * the start of the next ("pause between passes": a sweep or a purge that may take long). Either way
 * two runs never overlap: a run due while one is under way starts when it ends.
 */
export type PeriodicJobOptions<T> = Common<T> &
  ({ everyMs: number; pauseMs?: undefined } | { pauseMs: number; everyMs?: undefined });

export interface PeriodicJob<T> extends RunContext {
  /** Runs by the clock from now on, the first one period from now (`runNow()` for one at once). */
  start(): PeriodicJob<T>;
  /**
   * A run that begins after this call: now, or right after the one under way (calls made meanwhile
   * share that one run). Rejects with the run's error (which is logged too). Works without `start()`.
   * Once `stop()` was called it starts nothing and rejects at once (a stopped job runs no more, and a
   * caller that awaits a result must not take "nothing ran" for one); `wake()` is the call that may
   * come late without care.
   */
  runNow(): Promise<T>;
  /** `runNow()` for a caller that does not wait: a failure is only logged. Nothing once stopped. */
  wake(): void;
  /** Resolves once no run is under way and none is asked for. */
  idle(): Promise<void>;
  /** No more runs by the clock; waits for the run under way (and one asked for meanwhile). */
  stop(): Promise<void>;
}

/**
 * The one loop of every periodic job of the hub (the worker's sweeper and destination refreshes,
 * hub-api's retention, reprocessing and isolated destinations, the outbox purge): a timer, never two runs at once,
 * failures logged and the loop going on, and a stop that waits for the run under way.
 */
export function periodicJob<T>(options: PeriodicJobOptions<T>): PeriodicJob<T> {
  const { logger, name } = options;
  let started = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** The run under way. */
  let current: Promise<T> | undefined;
  /** The run asked for while one is under way: its promise and how to settle it. */
  let next: { promise: Promise<T>; begin: () => void } | undefined;

  function schedule(lastStart: number): void {
    clearTimeout(timer);
    if (!started || stopped) return;
    const delay =
      options.everyMs !== undefined ? Math.max(0, lastStart + options.everyMs - Date.now()) : options.pauseMs;
    timer = setTimeout(() => job.wake(), delay);
    timer.unref();
  }

  function begin(): Promise<T> {
    const startedAt = Date.now();
    // The clock waits for this run to end: a timed run never queues behind another.
    clearTimeout(timer);
    const run = (async () => options.run(job))();
    current = run;
    run
      .catch((error) => logger.error({ err: error, job: name }, `${name}: a run failed; the next one comes on time`))
      .finally(() => {
        current = undefined;
        if (next) {
          const asked = next;
          next = undefined;
          asked.begin();
        } else schedule(startedAt);
      });
    return run;
  }

  const job: PeriodicJob<T> = {
    get stopped() {
      return stopped;
    },
    start() {
      if (started || stopped) return job;
      started = true;
      schedule(Date.now());
      return job;
    },
    runNow() {
      if (stopped) return Promise.reject(new Error(`${name}: the job is stopped; runNow() starts no run`));
      if (!current) return begin();
      if (!next) {
        let settle!: (run: Promise<T>) => void;
        const promise = new Promise<T>((resolve) => {
          settle = resolve;
        });
        next = { promise, begin: () => settle(begin()) };
      }
      return next.promise;
    },
    wake() {
      if (!stopped) job.runNow().catch(() => undefined);
    },
    async idle() {
      while (current || next) await (next?.promise ?? current)?.catch(() => undefined);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await job.idle();
    },
  };
  return job;
}
