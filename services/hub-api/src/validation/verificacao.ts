import type { ErroDeValidacao } from '@hub/http';
import type { AnySchemaObject } from 'ajv';
import { AVALIACOES_POR_VALOR_MAX, type PerfilDeCusto } from './custo';
import { ESQUEMA_PROFUNDIDADE_MAX, mensagemDeProfundidade, profundidade } from './limites';
import { recursaoSemFim } from './recursao';

/** The checks of a schema being registered that need no ajv (esquemas.ts runs them around ajv's). */

export const DRAFTS = {
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
  'draft-07': 'http://json-schema.org/draft-07/schema#',
} as const;
export type Draft = keyof typeof DRAFTS;

/** Which draft a schema declares with $schema (2020-12 when absent); undefined for any other. */
export function draftOf(esquema: AnySchemaObject): Draft | undefined {
  const declared = esquema.$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared !== 'string') return undefined;
  const normalised = declared.replace(/#$/, '');
  if (normalised === DRAFTS['2020-12']) return '2020-12';
  if (normalised === DRAFTS['draft-07'].replace(/#$/, '')) return 'draft-07';
  return undefined;
}

/** What a schema must be before ajv sees it: an object, of a supported draft, synchronous, not too deep. */
export function forma(esquema: unknown): { schema: AnySchemaObject; draft: Draft } | ErroDeValidacao {
  if (typeof esquema !== 'object' || esquema === null || Array.isArray(esquema))
    return { caminho: '/esquema', mensagem: 'must be a JSON Schema object' };
  const schema = esquema as AnySchemaObject;
  const draft = draftOf(schema);
  if (!draft)
    return {
      caminho: '/esquema/$schema',
      mensagem: `must be ${DRAFTS['2020-12']} (the default) or ${DRAFTS['draft-07']}`,
    };
  if (schema.$async !== undefined)
    return { caminho: '/esquema/$async', mensagem: 'asynchronous schemas are not supported' };
  // The HTTP schema refuses this already; checked again because nothing deeper may reach ajv.
  if (profundidade(schema, ESQUEMA_PROFUNDIDADE_MAX) > ESQUEMA_PROFUNDIDADE_MAX)
    return { caminho: '/esquema', mensagem: mensagemDeProfundidade(ESQUEMA_PROFUNDIDADE_MAX) };
  return { schema, draft };
}

/** What a schema valid against its meta-schema may still not be: endless, or too costly a validation. */
export function custoso(schema: AnySchemaObject, perfil: PerfilDeCusto): ErroDeValidacao | undefined {
  if (recursaoSemFim(schema))
    return {
      caminho: '/esquema',
      mensagem: 'refers to itself ($ref) without descending into the data, so validation would never end',
    };
  if (perfil.excedeu)
    return {
      caminho: perfil.excedeu,
      mensagem:
        `would cost more than ${AVALIACOES_POR_VALOR_MAX} checks (subschemas, weighted) for one value of dados ` +
        '(references or a recursion that fan out, or too long an enum, anyOf or list of patterns), holding the hub for every publication',
    };
  return undefined;
}
