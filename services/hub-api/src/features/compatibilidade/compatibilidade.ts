import { MAX_ERROS } from '@hub/http';
import { novoContexto } from './contexto';
import { type Erro, type Esquema, raizDe } from './no';
import { subconjunto } from './subconjunto';

/** The rules of the Confluent Schema Registry, as the hub names them. */
export const COMPATIBILIDADES = ['none', 'backward', 'forward', 'full'] as const;
export type Compatibilidade = (typeof COMPATIBILIDADES)[number];

export interface ResultadoDaCompatibilidade {
  compativel: boolean;
  /** At most 50; `caminho` is a JSON Pointer into the new schema. */
  erros: Erro[];
}

/**
 * Whether version N (`nova`) may follow N-1 (`anterior`) under a rule. backward: every document
 * valid under N-1 is valid under N; forward: every document valid under N is valid under N-1; full:
 * both. Sound: `compativel` is true only when proven; what the checker cannot decide is a finding
 * that says so. Pure: no I/O, no ajv compilation.
 */
export function verificarCompatibilidade(
  anterior: Esquema,
  nova: Esquema,
  regra: Compatibilidade,
): ResultadoDaCompatibilidade {
  const erros: Erro[] = [];
  if (regra === 'backward' || regra === 'full') {
    erros.push(...subconjunto([raizDe(anterior)], raizDe(nova), novoContexto(true)));
  }
  if (regra === 'forward' || regra === 'full') {
    erros.push(...subconjunto([raizDe(nova)], raizDe(anterior), novoContexto(false)));
  }
  const unicos = new Map<string, Erro>();
  for (const erro of erros) unicos.set(`${erro.caminho}\u0000${erro.mensagem}`, erro);
  return { compativel: unicos.size === 0, erros: [...unicos.values()].slice(0, MAX_ERROS) };
}
