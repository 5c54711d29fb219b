import { type ErroDeValidacao, MAX_ERROS, pointer } from '@hub/http';
import Ajv, { type AnySchemaObject, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import {
  AVALIACOES_POR_VALOR_MAX,
  custoDosDados,
  ORCAMENTO_POR_CORPO,
  type PerfilDeCusto,
  perfilDeCusto,
} from './custo';
import {
  DADOS_PROFUNDIDADE_MAX,
  ESQUEMA_PROFUNDIDADE_MAX,
  mensagemDeProfundidade,
  profundidade,
  valoresPorNivel,
} from './limites';
import { Identidades, itensUnicos } from './itens-unicos';
import { recursaoSemFim } from './recursao';

/**
 * The JSON Schemas that applications register, and the one function that checks `dados` against
 * them: POST /versao-de-esquema/{id}/validar and publication use exactly `validarDados`.
 *
 * One ajv per draft (2020-12, the default, and draft-07), strict; compiled validators are cached
 * per schema version id, so a version's schema is compiled once per process (versions are
 * immutable, so the cache never goes stale).
 *
 * Validation is bounded (~100 ms for the worst body a schema accepts): `dados` that could cost
 * more checks than ORCAMENTO_POR_CORPO are refused before ajv runs; then a validator that stops
 * at the first error decides, so valid bodies pay only the success path; only an invalid body whose
 * cost bound is small (ORCAMENTO_DO_DETALHE) is checked again with every error kept (ajv keeps
 * every failed branch's errors, in memory, before the hub keeps 50); a larger one reports the
 * errors of the first failure.
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
  // `source` keeps the generated code reachable, to measure it (fatorDoCodigo).
  code: { regExp: re2, source: true },
  allErrors: false,
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

/**
 * An invalid body whose cost bound is at most this many checks is validated again with every error
 * kept (at most this many error objects, a few MB, a few ms).
 */
export const ORCAMENTO_DO_DETALHE = 100_000;

/**
 * V8 optimizes a function only up to a size (~60 KB of bytecode); the code ajv generates for a wide
 * schema passes it and runs interpreted, about ten times slower a check (measured: an `anyOf` of 150
 * consts costs ~45 ns a failed branch, one of 200 ~430 ns). Such a validator's checks count ten
 * times against the budget.
 */
const CODIGO_OTIMIZAVEL_MAX = 50_000;
const LENTIDAO_INTERPRETADA = 10;

/** 1, or LENTIDAO_INTERPRETADA when a function of the validator (or one it calls) is too long. */
function fatorDoCodigo(validador: ValidateFunction): number {
  const vistas = new Set<unknown>();
  const pendentes: unknown[] = [validador];
  for (let funcao = pendentes.pop(); funcao; funcao = pendentes.pop()) {
    if (typeof funcao !== 'function' || vistas.has(funcao)) continue;
    vistas.add(funcao);
    if (funcao.toString().length > CODIGO_OTIMIZAVEL_MAX) return LENTIDAO_INTERPRETADA;
    const escopo = (funcao as ValidateFunction).source?.scopeValues ?? {};
    for (const nomes of Object.values(escopo)) for (const nome of nomes ?? []) pendentes.push(nome.value?.ref);
  }
  return 1;
}

/** A version's schema as the validator keeps it; `detalhado` (allErrors) is compiled when needed. */
export interface Compilado {
  draft: Draft;
  schema: AnySchemaObject;
  rapido: ValidateFunction;
  detalhado?: ValidateFunction;
  perfil: PerfilDeCusto;
  /** What one check of `perfil` weighs with this code (fatorDoCodigo). */
  fator: number;
}

/** ajv compiles and validates recursively; a stack overflow means the input was too deep for it. */
const estourouAPilha = (error: unknown) => error instanceof RangeError;
const ESTOUROU: ErrorObject = {
  keyword: 'profundidade',
  instancePath: '',
  schemaPath: '#',
  params: {},
  message: 'is nested too deeply for this schema',
};
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
  /** Per draft: one ajv that stops at the first error, one that keeps them all. */
  private readonly ajvs: Record<Draft, { rapido: Ajv; detalhado: Ajv }>;
  private readonly validadores = new Map<string, Compilado>();
  /** How many schemas were compiled: the tests prove that nothing compiles twice. */
  compilacoes = 0;

  /** The numbering of values that `uniqueItems` uses during the validation under way. */
  private identidades: Identidades | undefined;

  constructor(private readonly maxValidadores = 10_000) {
    const unicos = itensUnicos(() => {
      this.identidades ??= new Identidades();
      return this.identidades;
    });
    const preparar = (ajv: Ajv) => {
      addFormats(ajv);
      ajv.removeKeyword('uniqueItems').addKeyword(unicos);
      return ajv;
    };
    const todos = { ...OPTIONS, allErrors: true };
    this.ajvs = {
      '2020-12': { rapido: preparar(new Ajv2020(OPTIONS)), detalhado: preparar(new Ajv2020(todos)) },
      'draft-07': { rapido: preparar(new Ajv(OPTIONS)), detalhado: preparar(new Ajv(todos)) },
    };
  }

  /**
   * Checks a schema that is being registered: the draft is supported, it is valid against its
   * meta-schema and it compiles in strict mode. The compiled validator is returned so that
   * `lembrar` can keep it under the new version's id (no second compilation).
   */
  verificarEsquema(esquema: unknown): { erros: ErroDeValidacao[]; validador?: Compilado } {
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
    const ajv = this.ajvs[draft].rapido;
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
    const perfil = perfilDeCusto(schema);
    if (perfil.excedeu) {
      return {
        erros: [
          {
            caminho: perfil.excedeu,
            mensagem:
              `would cost more than ${AVALIACOES_POR_VALOR_MAX} checks (subschemas, weighted) for one value of dados ` +
              '(references or a recursion that fan out, or too long an enum, anyOf or list of patterns), holding the hub for every publication',
          },
        ],
      };
    }
    let validador: Compilado;
    try {
      validador = this.compilado(draft, schema, perfil);
    } catch (error) {
      const mensagem = estourouAPilha(error) ? DEMASIADO_FUNDO : (error as Error).message;
      return { erros: [{ caminho: '/esquema', mensagem }] };
    }
    return { erros: [], validador };
  }

  /** Keeps the validator compiled by `verificarEsquema` under the id of the version just created. */
  lembrar(versaoId: string, validador: Compilado): void {
    this.validadores.set(versaoId, validador);
    if (this.validadores.size > this.maxValidadores) {
      const oldest = this.validadores.keys().next().value;
      if (oldest !== undefined) this.validadores.delete(oldest);
    }
  }

  /** `dados` against the schema of a version; errors point into the body (`/dados/...`). */
  validarDados(versao: VersaoValidavel, dados: unknown): ResultadoDaValidacao {
    const porNivel = valoresPorNivel(dados, DADOS_PROFUNDIDADE_MAX);
    if (!porNivel)
      return {
        valido: false,
        erros: [{ caminho: '/dados', mensagem: mensagemDeProfundidade(DADOS_PROFUNDIDADE_MAX) }],
      };
    const compilado = this.validadorDe(versao);
    const custo = this.custoDe(compilado, porNivel);
    if (custo > ORCAMENTO_POR_CORPO) {
      const valores = porNivel.reduce((a, b) => a + b, 0);
      return {
        valido: false,
        erros: [
          {
            caminho: '/dados',
            mensagem:
              `has too many values for this schema: checking its ${valores} values could cost ${custo} checks, ` +
              `more than the ${ORCAMENTO_POR_CORPO} one body may cost; send fewer values or use a simpler schema`,
          },
        ],
      };
    }
    let rapido = this.executar(compilado.rapido, dados);
    if (rapido.estourou) {
      // ajv nests one block per keyword when it stops at the first error, and V8 cannot parse the
      // code of a very wide subschema (~2,000 properties) that way: such a version uses the other.
      compilado.rapido = this.detalhadoDe(compilado);
      rapido = this.executar(compilado.rapido, dados);
    }
    if (rapido.valido) return { valido: true, erros: [] };
    let erros = rapido.erros;
    if (custo <= ORCAMENTO_DO_DETALHE && compilado.rapido !== compilado.detalhado) {
      // Same schema, same answer; only the list of errors is longer.
      const detalhado = this.executar(this.detalhadoDe(compilado), dados);
      if (!detalhado.valido && !detalhado.estourou) erros = detalhado.erros;
    }
    return { valido: false, erros: erros.slice(0, MAX_ERROS).map((e) => erroDosDados(e)) };
  }

  /**
   * The most checks validating `dados` against a version may cost (what ORCAMENTO_POR_CORPO bounds),
   * or undefined for `dados` deeper than accepted. For benchmarks and tests.
   */
  custoDosDados(versao: VersaoValidavel, dados: unknown): number | undefined {
    const porNivel = valoresPorNivel(dados, DADOS_PROFUNDIDADE_MAX);
    return porNivel && this.custoDe(this.validadorDe(versao), porNivel);
  }

  private custoDe(compilado: Compilado, porNivel: number[]): number {
    return custoDosDados(compilado.perfil, porNivel) * compilado.fator;
  }

  private detalhadoDe(compilado: Compilado): ValidateFunction {
    compilado.detalhado ??= this.compilar(this.ajvs[compilado.draft].detalhado, compilado.schema);
    return compilado.detalhado;
  }

  /** Runs one validator; a stack overflow (recursion and depth are bounded: a last resort) is invalid. */
  private executar(validador: ValidateFunction, dados: unknown) {
    try {
      const valido = validador(dados) as boolean;
      return { valido, estourou: false, erros: validador.errors ?? [] };
    } catch (error) {
      if (!estourouAPilha(error)) throw error;
      return { valido: false, estourou: true, erros: [ESTOUROU] };
    } finally {
      this.identidades = undefined;
    }
  }

  private validadorDe(versao: VersaoValidavel): Compilado {
    const cached = this.validadores.get(versao.id);
    if (cached) return cached;
    const schema = versao.esquema as AnySchemaObject;
    const draft = draftOf(schema);
    // A stored version passed verificarEsquema when it was created; failing here is a bug.
    if (!draft) throw new Error(`schema version ${versao.id} declares an unsupported $schema`);
    // Versions stored before the cost limits are profiled here too, so the budget holds for them.
    const validador = this.compilado(draft, schema, perfilDeCusto(schema));
    this.lembrar(versao.id, validador);
    return validador;
  }

  private compilado(draft: Draft, schema: AnySchemaObject, perfil: PerfilDeCusto): Compilado {
    let rapido: ValidateFunction;
    try {
      rapido = this.compilar(this.ajvs[draft].rapido, schema);
    } catch (error) {
      // Too wide to nest a block per keyword (see validarDados): the every-error code decides alone.
      if (!estourouAPilha(error)) throw error;
      const detalhado = this.compilar(this.ajvs[draft].detalhado, schema);
      return { draft, schema, rapido: detalhado, detalhado, perfil, fator: LENTIDAO_INTERPRETADA };
    }
    return { draft, schema, rapido, perfil, fator: fatorDoCodigo(rapido) };
  }

  private compilar(ajv: Ajv, schema: AnySchemaObject): ValidateFunction {
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
