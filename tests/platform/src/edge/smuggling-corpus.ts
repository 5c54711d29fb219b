import { CASOS_DE_CABECA } from './corpus-heads';
import { CASOS_DE_ENQUADRAMENTO } from './corpus-framing';
import { CASOS_DE_PIPELINING } from './corpus-pipelining';

export type { Caso, Contexto } from './corpus-tools';

/** The crafted byte sequences of the differential smuggling suite (docs/decisions/edge-proxy.md). */
export const CORPUS = [...CASOS_DE_ENQUADRAMENTO, ...CASOS_DE_PIPELINING, ...CASOS_DE_CABECA];
