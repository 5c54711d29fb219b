import { jitteredWait, retryStep } from '@hub/broker';

/**
 * When the next attempt goes: the delay queue (step) it waits in and its own expiration. The step
 * follows the attempts made in the cycle (1st failure → 1st step, …, the last step repeats); the
 * expiration is drawn in [75 %, 100 %] of the step (jitter, so a burst of failures does not come
 * back as one burst). A message expires only at the head of its queue, so whatever waits before it,
 * its wait stays within its step. A Retry-After (429/503) raises the wait to at least that, bounded
 * by the longest step: the job goes to the shortest step that holds it.
 */
export function proximoAtraso(
  tentativasNoCiclo: number,
  passosMs: readonly number[],
  retryAfterMs?: number,
  aleatorio: () => number = Math.random,
): { passoMs: number; expiracaoMs: number } {
  const maior = Math.max(...passosMs);
  const passoMs = retryStep(passosMs, tentativasNoCiclo - 1);
  const expiracaoMs = jitteredWait(passoMs, 0.75, aleatorio);
  if (retryAfterMs === undefined || retryAfterMs <= expiracaoMs) return { passoMs, expiracaoMs };
  const alvo = Math.min(retryAfterMs, maior);
  const cabe = [...passosMs].sort((a, b) => a - b).find((p) => p >= alvo) ?? maior;
  return { passoMs: Math.max(cabe, passoMs), expiracaoMs: Math.max(alvo, expiracaoMs) };
}
