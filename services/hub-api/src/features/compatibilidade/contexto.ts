import type { Erro, No } from './no';

/** Beyond this many comparisons the checker stops and refuses (it never guesses). */
export const PASSOS_MAX = 20_000;

/**
 * One check "is every document of A a document of B". `novaEhB` says which side is the new
 * version (backward: A is N-1 and B is N; forward: the reverse), so that a finding points into the
 * new schema and reads as the change from N-1 to N.
 */
export interface Contexto {
  novaEhB: boolean;
  passos: number;
  /** Pairs of resolved $refs under comparison, with the data depth at which each began. */
  emCurso: Map<string, number>;
  /** How many levels into the document the comparison has descended (properties, items). */
  profundidade: number;
}

export const novoContexto = (novaEhB: boolean): Contexto => ({
  novaEhB,
  passos: 0,
  emCurso: new Map(),
  profundidade: 0,
});

/**
 * A finding. `seBNova` reads as the change when B is the new schema (a constraint added, a bound
 * lowered), `seANova` when A is (the constraint removed, the bound raised).
 */
export function mudanca(ctx: Contexto, a: No | string, b: No | string, seBNova: string, seANova: string): Erro {
  const caminhoA = typeof a === 'string' ? a : a.caminho;
  const caminhoB = typeof b === 'string' ? b : b.caminho;
  return ctx.novaEhB ? { caminho: caminhoB, mensagem: seBNova } : { caminho: caminhoA, mensagem: seANova };
}

/** The checker cannot prove it either way: it refuses, and says why. */
export function indecidivel(ctx: Contexto, a: No | string, b: No | string, porque: string): Erro {
  const mensagem = `cannot decide whether every document stays valid: ${porque}; the check refuses what it cannot prove`;
  return mudanca(ctx, a, b, mensagem, mensagem);
}

/** The new side of a pair, for findings that belong to no single keyword. */
export const caminhoNovo = (ctx: Contexto, a: No[], b: No): string => (ctx.novaEhB ? b.caminho : (a[0]?.caminho ?? ''));
