import { jitteredWait, retryStep } from './jitter';
import { DEFAULT_RETRY_DELAYS_MS } from './ladder';

/**
 * A failure that can never succeed, however often the message is tried again (it breaks its schema,
 * the database refuses its data): the message goes to the queue's dead-letter exchange at once.
 */
export class FinalError extends Error {
  override name = 'FinalError';
}

/** A message that can never be handled (not JSON, breaks its schema): final, never retried. */
export class InvalidMessageError extends FinalError {
  override name = 'InvalidMessageError';
}

/** Marks a failure as final: `throw naoRepetir(error)` sends the message to its dead-letter exchange. */
export function naoRepetir(cause: unknown): FinalError {
  if (cause instanceof FinalError) return cause;
  return new FinalError(cause instanceof Error ? cause.message : String(cause), { cause });
}

/** How failed messages are tried again: each step is a queue of the retry ladder (./ladder.ts), shared by every consumer. */
export interface RetryPolicy {
  /** Delays before the 2nd, 3rd… attempt; the last one repeats. Default 1 s doubling up to 60 s. */
  delaysMs?: readonly number[];
  /** Attempts in all (the first included) before the message goes to the dead-letter exchange. Default 10. */
  maxAttempts?: number;
}

export type Classification = 'final' | 'retryable';

/** Final: a FinalError (InvalidMessageError included), or what the consumer's `isFinal` says is. */
export function classifyFailure(error: unknown, isFinal?: (error: unknown) => boolean): Classification {
  if (error instanceof FinalError) return 'final';
  return isFinal?.(error) ? 'final' : 'retryable';
}

/** Where a retried message waits (the ladder's step) and for how long (its own expiration). */
export interface RetryDelay {
  stepMs: number;
  expirationMs: number;
}

/**
 * The delay before attempt `next` (2 for the first retry): the step queue it waits in and its own
 * expiration, drawn in the upper half of the step. A message expires only at the head of its queue,
 * so jitter below the step keeps every message's wait within [step/2, step] whatever was queued
 * before it; with doubling steps, the waits grow from one attempt to the next.
 */
export function retryDelay(
  next: number,
  delaysMs: readonly number[] = DEFAULT_RETRY_DELAYS_MS,
  random: () => number = Math.random,
): RetryDelay {
  const stepMs = retryStep(delaysMs, next - 2);
  return { stepMs, expirationMs: jitteredWait(stepMs, 0.5, random) };
}
