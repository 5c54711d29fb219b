/**
 * Retry waits of the platform: both retry levels (the broker's infrastructure retries and the worker's
 * destination retries) wait in delay queues of fixed steps, each message with its own expiration.
 */

/** The step at `index` (from 0), the last one repeating for every index past the end. */
export function retryStep(stepsMs: readonly number[], index: number): number {
  if (stepsMs.length === 0) throw new Error('retryStep needs at least one step');
  return stepsMs[Math.min(Math.max(Math.trunc(index), 0), stepsMs.length - 1)]!;
}

/**
 * A wait drawn in [lowest × step, step] (at least 1 ms), so a burst of failures does not come back as
 * one burst. Never above the step: a message expires only at the head of its delay queue, so a wait
 * within the step keeps every message's wait within its step whatever was queued before it.
 */
export function jitteredWait(stepMs: number, lowest: number, random: () => number = Math.random): number {
  if (!(lowest >= 0 && lowest <= 1)) throw new Error(`jitter floor ${lowest} is not within [0, 1]`);
  const draw = Math.min(Math.max(random(), 0), 1);
  return Math.max(1, Math.round(stepMs * (lowest + (1 - lowest) * draw)));
}
