import { type ErroDeValidacao, MAX_ERROS, pointer } from '@hub/http';
import type { ErrorObject } from 'ajv';
import type { Geracao } from './compilacao';

/** ajv's errors in the hub's words: `caminho` (a JSON Pointer into the request's body) and `mensagem`. */

/** ajv compiles and validates recursively; a stack overflow means the input was too deep for it. */
export const estourouAPilha = (error: unknown) => error instanceof RangeError;

export const ESTOUROU: ErrorObject = {
  keyword: 'profundidade',
  instancePath: '',
  schemaPath: '#',
  params: {},
  message: 'is nested too deeply for this schema',
};

export const DEMASIADO_FUNDO =
  'is nested too deeply to compile (too long a chain of $ref, or too deep a structure behind them)';

/** The refusal of a schema that compiles for longer than HUB_SCHEMA_COMPILE_LIMIT. */
export const lentoDemais = (limiteMs: number) =>
  `takes more than ${limiteMs} ms to compile (HUB_SCHEMA_COMPILE_LIMIT); a schema that slow would hold back every publication of its version`;

/** The refusal of a schema whose compilation needs more than a compilation worker's heap. */
export const pesadoDemais = (limiteMb: number) =>
  `needs more than ${limiteMb} MB to compile; a schema that large would hold back every publication of its version`;

export function erroDoEsquema(error: ErrorObject): ErroDeValidacao {
  return {
    caminho: `/esquema${error.instancePath}`,
    mensagem: `${error.message ?? 'is invalid'} (${error.schemaPath})`,
  };
}

export function erroDosDados(error: ErrorObject): ErroDeValidacao {
  const base = `/dados${error.instancePath}`;
  if (error.keyword === 'required') {
    return { caminho: base + pointer([String(error.params.missingProperty)]), mensagem: 'is required' };
  }
  if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') {
    const extra = error.params.additionalProperty ?? error.params.unevaluatedProperty;
    return { caminho: base + pointer([String(extra)]), mensagem: 'is not an allowed property' };
  }
  return { caminho: base, mensagem: error.message ?? 'is invalid' };
}

/** Why a schema has no validator: its errors, `excedeu` when its compilation went past a bound. */
export interface Falha {
  erros: ErroDeValidacao[];
  excedeu?: boolean;
}

/** A compilation that gave no code, in the hub's words. */
export function falhaDe(geracao: Exclude<Geracao, { compilou: true }>): Falha {
  if ('errosDoEsquema' in geracao)
    return { erros: geracao.errosDoEsquema.slice(0, MAX_ERROS).map((e) => erroDoEsquema(e)) };
  if ('excedeu' in geracao) return { erros: [{ caminho: '/esquema', mensagem: geracao.mensagem }], excedeu: true };
  return { erros: [{ caminho: '/esquema', mensagem: geracao.estourou ? DEMASIADO_FUNDO : geracao.mensagem }] };
}
