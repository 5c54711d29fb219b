import { type ErroDeValidacao, MAX_ERROS, unprocessable } from '@hub/http';
import type { AnySchemaObject, ValidateFunction } from 'ajv';
import { type Classe, Compilador, type Geracao, type Variante } from './compilacao';
import { custoDosDados, ORCAMENTO_POR_CORPO, type PerfilDeCusto, perfilDeCusto } from './custo';
import { ESTOUROU, erroDosDados, estourouAPilha, type Falha, falhaDe } from './erros-do-ajv';
import { Identidades, primeiroRepetido } from './itens-unicos.cjs';
import { DADOS_PROFUNDIDADE_MAX, mensagemDeProfundidade, valoresPorNivel } from './limites';
import { carregarCodigo, type Modulos } from './standalone';
import { custoso, type Draft, draftOf, forma } from './verificacao';

export { DRAFTS, type Draft, draftOf } from './verificacao';

/**
 * The JSON Schemas that applications register, and the one function that checks `dados` against
 * them: POST /versao-de-esquema/{id}/validar and publication use exactly `validarDados`.
 *
 * ajv never runs on this thread: a compilation worker (compilacao.ts) checks a schema against its
 * meta-schema and compiles it into ajv's standalone code, under HUB_SCHEMA_COMPILE_LIMIT, and this
 * thread loads the code (standalone.ts). Validators are cached per schema version id; a version
 * not cached yet (created by another process, or before a restart) is compiled on its first use,
 * while other requests go on; the uses of that version wait for it (one compilation for them all).
 * Versions are immutable, so the cache never goes stale.
 *
 * Validation is bounded (~100 ms for the worst body a schema accepts): `dados` that could cost
 * more checks than ORCAMENTO_POR_CORPO are refused before the validator runs; then a validator that
 * stops at the first error decides, so valid bodies pay only the success path; only an invalid body
 * whose cost bound is small (ORCAMENTO_DO_DETALHE) is checked again with every error kept (ajv keeps
 * every failed branch's errors, in memory, before the hub keeps 50); a larger one reports the
 * errors of the first failure.
 */

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
 * An invalid body whose cost bound is at most this many checks is validated again with every error
 * kept (at most this many error objects, a few MB, a few ms).
 */
export const ORCAMENTO_DO_DETALHE = 100_000;

/**
 * V8 optimizes a function only up to a size (~60 KB of bytecode); the code ajv generates for a wide
 * schema passes it and runs interpreted, about ten times slower a check (measured: an `anyOf` of 150
 * consts costs ~45 ns a failed branch, one of 200 ~430 ns). Such a validator's checks count ten
 * times against the budget. The worker measures the longest function of the code it made.
 */
const CODIGO_OTIMIZAVEL_MAX = 50_000;
const LENTIDAO_INTERPRETADA = 10;

/** How long a version whose compilation went past the limit is refused before it is tried again. */
const ESPERA_DE_UMA_VERSAO_LENTA_MS = 60_000;

/** A version's schema as the validator keeps it; `detalhado` (allErrors) is made when needed. */
export interface Compilado {
  draft: Draft;
  schema: AnySchemaObject;
  rapido: ValidateFunction;
  /** undefined once asked for when the worker could not make it (then rapido's errors stand). */
  detalhado?: Promise<ValidateFunction | undefined>;
  perfil: PerfilDeCusto;
  /** What one check of `perfil` weighs with this code (CODIGO_OTIMIZAVEL_MAX). */
  fator: number;
}

/** A schema checked for registration: its validator, or why not (`excedeu`: past the limit). */
export interface EsquemaVerificado {
  erros: ErroDeValidacao[];
  validador?: Compilado;
  excedeu?: boolean;
}

type Carga = { validador: Compilado } | Falha;

export interface ValidadorOptions {
  /** HUB_SCHEMA_COMPILE_LIMIT (10 s by default), when no `compilador` is given. */
  limiteMs?: number;
  compilador?: Compilador;
  maxValidadores?: number;
}

export class ValidadorDeEsquemas {
  readonly compilador: Compilador;
  private readonly maxValidadores: number;
  private readonly validadores = new Map<string, Compilado>();
  /** First uses under way: the publications of a version wait for one compilation. */
  private readonly carregando = new Map<string, Promise<Compilado>>();
  /** Versions whose compilation went past a bound, until when they are refused, and why. */
  private readonly lentas = new Map<string, { ate: number; mensagem: string }>();
  /** How many schemas were compiled (in the worker): the tests prove that nothing compiles twice. */
  compilacoes = 0;

  /** The numbering of values that `uniqueItems` uses during the validation under way. */
  private identidades: Identidades | undefined;
  /** What the loaded code requires beside ajv's runtime (standalone.ts): the hub's `uniqueItems`. */
  private readonly modulos: Modulos;

  constructor({ limiteMs = 10_000, compilador, maxValidadores = 10_000 }: ValidadorOptions = {}) {
    this.compilador = compilador ?? new Compilador({ limiteMs });
    this.maxValidadores = maxValidadores;
    this.modulos = {
      'event-hub:itens-unicos': {
        primeiroRepetido: (itens: unknown[]) => {
          this.identidades ??= new Identidades();
          return primeiroRepetido(this.identidades, itens);
        },
      },
    };
  }

  /**
   * Checks a schema that is being registered: the draft is supported, it is valid against its
   * meta-schema, it compiles in strict mode within the limit, and its validation is bounded. The
   * validator is returned so that `lembrar` can keep it under the new version's id.
   */
  async verificarEsquema(esquema: unknown): Promise<EsquemaVerificado> {
    const formado = forma(esquema);
    if ('caminho' in formado) return { erros: [formado] };
    const { schema, draft } = formado;
    // Compiled first, in the worker under the limit: a schema that takes too long is refused before
    // this thread analyses it (the analyses below are linear, but a 10,000-pattern schema is large).
    const geracao = await this.gerar(draft, schema, 'rapido', 'registro', true);
    if (!geracao.compilou) return falhaDe(geracao);
    const perfil = perfilDeCusto(schema);
    const erro = custoso(schema, perfil);
    if (erro) return { erros: [erro] };
    const carga = await this.carregado(draft, schema, perfil, geracao, 'registro');
    return 'validador' in carga ? { erros: [], validador: carga.validador } : carga;
  }

  /** Keeps the validator made by `verificarEsquema` under the id of the version just created. */
  lembrar(versaoId: string, validador: Compilado): void {
    this.validadores.set(versaoId, validador);
    if (this.validadores.size > this.maxValidadores) {
      const oldest = this.validadores.keys().next().value;
      if (oldest !== undefined) this.validadores.delete(oldest);
    }
  }

  /** `dados` against the schema of a version; errors point into the body (`/dados/...`). */
  async validarDados(versao: VersaoValidavel, dados: unknown): Promise<ResultadoDaValidacao> {
    const porNivel = valoresPorNivel(dados, DADOS_PROFUNDIDADE_MAX);
    if (!porNivel)
      return {
        valido: false,
        erros: [{ caminho: '/dados', mensagem: mensagemDeProfundidade(DADOS_PROFUNDIDADE_MAX) }],
      };
    const compilado = await this.validadorDe(versao);
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
      // ajv nests one block per keyword when it stops at the first error, and V8 cannot run the
      // code of a very wide subschema (~2,000 properties) that way: such a version uses the other.
      const detalhado = await this.detalhadoDe(compilado);
      if (detalhado) {
        compilado.rapido = detalhado;
        rapido = this.executar(detalhado, dados);
      }
    }
    if (rapido.valido) return { valido: true, erros: [] };
    let erros = rapido.erros;
    if (custo <= ORCAMENTO_DO_DETALHE) {
      const detalhado = await this.detalhadoDe(compilado);
      // Same schema, same answer; only the list of errors is longer.
      if (detalhado && detalhado !== compilado.rapido) {
        const todos = this.executar(detalhado, dados);
        if (!todos.valido && !todos.estourou) erros = todos.erros;
      }
    }
    return { valido: false, erros: erros.slice(0, MAX_ERROS).map((e) => erroDosDados(e)) };
  }

  /**
   * The most checks validating `dados` against a version may cost (what ORCAMENTO_POR_CORPO bounds),
   * or undefined for `dados` deeper than accepted. For benchmarks and tests.
   */
  async custoDosDados(versao: VersaoValidavel, dados: unknown): Promise<number | undefined> {
    const porNivel = valoresPorNivel(dados, DADOS_PROFUNDIDADE_MAX);
    return porNivel && this.custoDe(await this.validadorDe(versao), porNivel);
  }

  /** Ends the compilation workers (they never keep the process alive; this frees them sooner). */
  encerrar(): Promise<void> {
    return this.compilador.encerrar();
  }

  private custoDe(compilado: Compilado, porNivel: number[]): number {
    return custoDosDados(compilado.perfil, porNivel) * compilado.fator;
  }

  private detalhadoDe(compilado: Compilado): Promise<ValidateFunction | undefined> {
    compilado.detalhado ??= this.gerar(compilado.draft, compilado.schema, 'detalhado').then((geracao) =>
      geracao.compilou ? this.carregar(geracao.codigo) : undefined,
    );
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

  private validadorDe(versao: VersaoValidavel): Promise<Compilado> | Compilado {
    const cached = this.validadores.get(versao.id);
    if (cached) return cached;
    let carregando = this.carregando.get(versao.id);
    if (!carregando) {
      carregando = this.primeiroUso(versao).finally(() => this.carregando.delete(versao.id));
      this.carregando.set(versao.id, carregando);
    }
    return carregando;
  }

  /** A stored version's validator, made in the worker; past a bound, the version is refused a while. */
  private async primeiroUso(versao: VersaoValidavel): Promise<Compilado> {
    const refusal = (mensagem: string) =>
      unprocessable('esquema_invalido', `the schema of this version ${mensagem}`, [
        { caminho: '/versao_do_esquema', mensagem },
      ]);
    const recusada = this.lentas.get(versao.id);
    if (recusada && recusada.ate > Date.now()) throw refusal(recusada.mensagem);
    const schema = versao.esquema as AnySchemaObject;
    const draft = draftOf(schema);
    // A stored version passed verificarEsquema when it was created; failing here is a bug.
    if (!draft) throw new Error(`schema version ${versao.id} declares an unsupported $schema`);
    // Versions stored before the cost limits are profiled here too, so the budget holds for them.
    const geracao = await this.gerar(draft, schema, 'rapido');
    const carga = geracao.compilou
      ? await this.carregado(draft, schema, perfilDeCusto(schema), geracao)
      : falhaDe(geracao);
    if ('validador' in carga) {
      this.lembrar(versao.id, carga.validador);
      return carga.validador;
    }
    const mensagem = carga.erros[0]?.mensagem ?? 'does not compile';
    if (!carga.excedeu) throw new Error(`schema version ${versao.id} does not compile: ${mensagem}`);
    this.lentas.set(versao.id, { ate: Date.now() + ESPERA_DE_UMA_VERSAO_LENTA_MS, mensagem });
    throw refusal(mensagem);
  }

  /** The fast validator of a schema (the every-error one when the fast code is too deep for ajv or V8). */
  private async carregado(
    draft: Draft,
    schema: AnySchemaObject,
    perfil: PerfilDeCusto,
    geracao: Extract<Geracao, { compilou: true }>,
    classe: Classe = 'uso',
  ): Promise<Carga> {
    let rapido: ValidateFunction;
    try {
      rapido = this.carregar(geracao.codigo);
    } catch (error) {
      if (!estourouAPilha(error)) throw error;
      const detalhada = await this.gerar(draft, schema, 'detalhado', classe);
      if (!detalhada.compilou) return falhaDe(detalhada);
      const detalhado = this.carregar(detalhada.codigo);
      return {
        validador: {
          draft,
          schema,
          rapido: detalhado,
          detalhado: Promise.resolve(detalhado),
          perfil,
          fator: LENTIDAO_INTERPRETADA,
        },
      };
    }
    if (geracao.detalhado)
      return {
        validador: { draft, schema, rapido, detalhado: Promise.resolve(rapido), perfil, fator: LENTIDAO_INTERPRETADA },
      };
    const fator = geracao.maiorFuncao > CODIGO_OTIMIZAVEL_MAX ? LENTIDAO_INTERPRETADA : 1;
    return { validador: { draft, schema, rapido, perfil, fator } };
  }

  private gerar(
    draft: Draft,
    schema: AnySchemaObject,
    variante: Variante,
    classe: Classe = 'uso',
    verificar = false,
  ): Promise<Geracao> {
    this.compilacoes += 1;
    return this.compilador.compilar({ esquema: schema, draft, variante, verificar }, classe);
  }

  private carregar(codigo: string): ValidateFunction {
    return carregarCodigo(codigo, this.modulos);
  }
}
