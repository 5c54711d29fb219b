import { type ErroDeValidacao, MAX_ERROS, pointer } from '@hub/http';
import Ajv, { type AnySchemaObject, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { DADOS_PROFUNDIDADE_MAX, ESQUEMA_PROFUNDIDADE_MAX, mensagemDeProfundidade, profundidade } from './limites';
import { AVALIACOES_POR_VALOR_MAX, avaliacoesDemais } from './custo';
import { Identidades, itensUnicos } from './itens-unicos';
import { recursaoSemFim } from './recursao';

/**
 * The JSON Schemas that applications register, and the one function that checks `dados` against
 * them: POST /versao-de-esquema/{id}/validar and publication use exactly `validarDados`.
 *
 * One ajv per draft (2020-12, the default, and draft-07), strict; compiled validators are cached
 * per schema version id, so a version's schema is compiled once per process (versions are
 * immutable, so the cache never goes stale).
 */

export const DRAFTS = {
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
  'draft-07': 'http://json-schema.org/draft-07/schema#',
} as const;
export type Draft = keyof typeof DRAFTS;

export interface ResultadoDaValidacao {
  valido: boolean;
  /** At most 50. */
  erros: ErroDeValidacao[];
}

/** A schema version as the validator needs it. */
export interface VersaoValidavel {
  id: string;
  esquema: unknown;
}

/**
 * `pattern` and `patternProperties` of registered schemas run on RE2 (linear time), not on the
 * backtracking RegExp engine: a schema like `^(a+)+$` must not be able to freeze the hub. A
 * pattern RE2 cannot compile (lookaround, backreferences) makes the schema invalid.
 */
const re2: RegExpEngine = Object.assign((pattern: string) => RE2JS.compile(pattern), {
  code: 'require("re2js").RE2JS.compile',
});

const OPTIONS: Options = {
  strict: true,
  code: { regExp: re2 },
  allErrors: true,
  allowUnionTypes: true,
  // A registered schema must not make the hub fetch anything, nor leave its $id behind in ajv.
  addUsedSchema: false,
  logger: false,
};

/**
 * The base URI given to a schema without `$id` while it compiles: without `addUsedSchema`, ajv
 * resolves "#" against the schema's base URI only when it has one, and recursive schemas (trees)
 * refer to themselves with "#".
 */
const BASE_SEM_ID = 'urn:event-hub:esquema';

/** ajv compiles and validates recursively; a stack overflow means the input was too deep for it. */
const estourouAPilha = (error: unknown) => error instanceof RangeError;
const DEMASIADO_FUNDO =
  'is nested too deeply to compile (too long a chain of $ref, or too deep a structure behind them)';

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

export class ValidadorDeEsquemas {
  private readonly ajvs: Record<Draft, Ajv>;
  private readonly validadores = new Map<string, ValidateFunction>();
  /** How many schemas were compiled: the tests prove that nothing compiles twice. */
  compilacoes = 0;

  /** The numbering of values that `uniqueItems` uses during the validation under way. */
  private identidades: Identidades | undefined;

  constructor(private readonly maxValidadores = 10_000) {
    const draft2020 = new Ajv2020(OPTIONS);
    const draft07 = new Ajv(OPTIONS);
    const unicos = itensUnicos(() => {
      this.identidades ??= new Identidades();
      return this.identidades;
    });
    for (const ajv of [draft2020, draft07]) {
      addFormats(ajv);
      ajv.removeKeyword('uniqueItems').addKeyword(unicos);
    }
    this.ajvs = { '2020-12': draft2020, 'draft-07': draft07 };
  }

  /**
   * Checks a schema that is being registered: the draft is supported, it is valid against its
   * meta-schema and it compiles in strict mode. The compiled validator is returned so that
   * `lembrar` can keep it under the new version's id (no second compilation).
   */
  verificarEsquema(esquema: unknown): { erros: ErroDeValidacao[]; validador?: ValidateFunction } {
    if (typeof esquema !== 'object' || esquema === null || Array.isArray(esquema)) {
      return { erros: [{ caminho: '/esquema', mensagem: 'must be a JSON Schema object' }] };
    }
    const schema = esquema as AnySchemaObject;
    const draft = draftOf(schema);
    if (!draft) {
      return {
        erros: [
          {
            caminho: '/esquema/$schema',
            mensagem: `must be ${DRAFTS['2020-12']} (the default) or ${DRAFTS['draft-07']}`,
          },
        ],
      };
    }
    if (schema.$async !== undefined)
      return { erros: [{ caminho: '/esquema/$async', mensagem: 'asynchronous schemas are not supported' }] };
    // The HTTP schema refuses this already; checked again because nothing deeper may reach ajv.
    if (profundidade(schema, ESQUEMA_PROFUNDIDADE_MAX) > ESQUEMA_PROFUNDIDADE_MAX)
      return { erros: [{ caminho: '/esquema', mensagem: mensagemDeProfundidade(ESQUEMA_PROFUNDIDADE_MAX) }] };
    const ajv = this.ajvs[draft];
    if (!ajv.validateSchema(schema)) {
      return { erros: (ajv.errors ?? []).slice(0, MAX_ERROS).map((e) => erroDoEsquema(e)) };
    }
    if (recursaoSemFim(schema)) {
      return {
        erros: [
          {
            caminho: '/esquema',
            mensagem: 'refers to itself ($ref) without descending into the data, so validation would never end',
          },
        ],
      };
    }
    const custosa = avaliacoesDemais(schema);
    if (custosa) {
      return {
        erros: [
          {
            caminho: custosa,
            mensagem:
              `would check one value of dados against more than ${AVALIACOES_POR_VALOR_MAX} subschemas ` +
              '(references or a recursion that fan out, or too long an enum or anyOf), holding the hub for every publication',
          },
        ],
      };
    }
    let validador: ValidateFunction;
    try {
      validador = this.compilar(draft, schema);
    } catch (error) {
      const mensagem = estourouAPilha(error) ? DEMASIADO_FUNDO : (error as Error).message;
      return { erros: [{ caminho: '/esquema', mensagem }] };
    }
    return { erros: [], validador };
  }

  /** Keeps the validator compiled by `verificarEsquema` under the id of the version just created. */
  lembrar(versaoId: string, validador: ValidateFunction): void {
    this.validadores.set(versaoId, validador);
    if (this.validadores.size > this.maxValidadores) {
      const oldest = this.validadores.keys().next().value;
      if (oldest !== undefined) this.validadores.delete(oldest);
    }
  }

  /** `dados` against the schema of a version; errors point into the body (`/dados/...`). */
  validarDados(versao: VersaoValidavel, dados: unknown): ResultadoDaValidacao {
    if (profundidade(dados, DADOS_PROFUNDIDADE_MAX) > DADOS_PROFUNDIDADE_MAX)
      return {
        valido: false,
        erros: [{ caminho: '/dados', mensagem: mensagemDeProfundidade(DADOS_PROFUNDIDADE_MAX) }],
      };
    const validador = this.validadorDe(versao);
    let valido: boolean;
    try {
      valido = validador(dados) as boolean;
    } catch (error) {
      // Registration refuses endless recursion and dados are bounded, so this is a last resort.
      if (!estourouAPilha(error)) throw error;
      return { valido: false, erros: [{ caminho: '/dados', mensagem: 'is nested too deeply for this schema' }] };
    } finally {
      this.identidades = undefined;
    }
    if (valido) return { valido: true, erros: [] };
    return { valido: false, erros: (validador.errors ?? []).slice(0, MAX_ERROS).map((e) => erroDosDados(e)) };
  }

  private validadorDe(versao: VersaoValidavel): ValidateFunction {
    const cached = this.validadores.get(versao.id);
    if (cached) return cached;
    const schema = versao.esquema as AnySchemaObject;
    const draft = draftOf(schema);
    // A stored version passed verificarEsquema when it was created; failing here is a bug.
    if (!draft) throw new Error(`schema version ${versao.id} declares an unsupported $schema`);
    const validador = this.compilar(draft, schema);
    this.lembrar(versao.id, validador);
    return validador;
  }

  private compilar(draft: Draft, schema: AnySchemaObject): ValidateFunction {
    const ajv = this.ajvs[draft];
    this.compilacoes += 1;
    const compilado = schema.$id === undefined ? { $id: BASE_SEM_ID, ...schema } : schema;
    try {
      return ajv.compile(compilado);
    } finally {
      // The validator is a closure of its own; ajv's cache entry would only keep the schema alive.
      ajv.removeSchema(compilado);
    }
  }
}

/** The shared validator of the process (publication and the /validar route use the same one). */
export const esquemas = new ValidadorDeEsquemas();

function erroDoEsquema(error: ErrorObject): ErroDeValidacao {
  return {
    caminho: `/esquema${error.instancePath}`,
    mensagem: `${error.message ?? 'is invalid'} (${error.schemaPath})`,
  };
}

function erroDosDados(error: ErrorObject): ErroDeValidacao {
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
