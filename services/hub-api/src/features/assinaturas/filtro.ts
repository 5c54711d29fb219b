import { invalidField, pointer } from '@hub/http';
import { RE2JS } from 're2js';
import { iguais, numaAvaliacao } from './igualdade';

export { iguais, numaAvaliacao };

/**
 * A subscription's content filter (`assinatura.filtro`): a JSON object checked here once, turned
 * into a predicate over a delivery body, and evaluated by publication for each subscription that
 * has one (docs/decisions/content-filters.md). Pure: no I/O.
 *
 * A filter is an object whose keys are
 * - paths into the delivery body, names separated by dots (`dados.cliente.uf`, `entidade_id`,
 *   `dados.itens.0.sku`: a name of digits indexes an array), each with a condition: a literal
 *   (deep equality; an object is a literal unless it has keys and every key starts with `$`) or an
 *   object of operators, all of which must hold;
 * - the combinators `$and`, `$or` (non-empty arrays of filters) and `$not` (a filter).
 * Every key must hold (an empty filter matches every body). A path the body lacks matches only
 * `$exists: false`, `$ne` and `$nin`.
 */

/** The bounds of a filter; a filter past one is refused with the caminho of the part that passes it. */
export const LIMITES_DO_FILTRO = {
  /** Bytes of its JSON text (UTF-8). */
  bytes: 4096,
  /** Filters inside filters: the filter itself is level 1, each $and/$or element or $not one deeper. */
  niveis: 8,
  /** Operators (a literal counts as one `$eq`) in the whole filter. */
  condicoes: 64,
  /** Literals of one `$in` or `$nin`. */
  literais: 100,
  /** Characters of one `$regex`. */
  regex: 256,
  /**
   * `$regex` operators in the whole filter. A regex without a literal to look for scans a long string
   * at about 30–90 ms per MB in re2js; 64 of them on one field of a 1 MB body held the event loop
   * for seconds per publication (docs/decisions/content-filters.md).
   */
  regexes: 4,
  /**
   * Instructions one `$regex` compiles to (re2js' programSize). A scan's cost grows with it, and a
   * counted repetition multiplies it (`(?:a?){1000}a{1000}`: 3,002, 0.7 s per MB); any regex of 256
   * characters without one compiles to fewer than this (about one instruction per character).
   */
  programa: 512,
} as const;

/** A compiled filter: does the delivery body match? */
export type Predicado = (corpo: unknown) => boolean;

type Parte = string | number;

/** A filter that breaks a rule: where (the parts of a JSON pointer into the filter) and why. */
export class FiltroInvalido extends Error {
  override name = 'FiltroInvalido';

  constructor(
    readonly partes: Parte[],
    mensagem: string,
  ) {
    super(mensagem);
  }
}

/** The refusal of a request whose filter (at `prefixo` of the body) is invalid: 422 filtro_invalido. */
export const recusaDoFiltro = (erro: FiltroInvalido, prefixo: Parte[] = ['filtro']) =>
  invalidField(pointer([...prefixo, ...erro.partes]), 'filtro_invalido', erro.message);

const AUSENTE = Symbol('ausente');
type Valor = unknown | typeof AUSENTE;

const COMPARACOES = {
  $gt: (a: number | string, b: number | string) => a > b,
  $gte: (a: number | string, b: number | string) => a >= b,
  $lt: (a: number | string, b: number | string) => a < b,
  $lte: (a: number | string, b: number | string) => a <= b,
} as const;
const OPERADORES = new Set(['$eq', '$ne', '$in', '$nin', '$exists', '$regex', ...Object.keys(COMPARACOES)]);

const ehObjeto = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An object of operators: it has keys, and every key starts with `$`. Any other value is a literal. */
const ehDeOperadores = (v: unknown): v is Record<string, unknown> => {
  if (!ehObjeto(v)) return false;
  const chaves = Object.keys(v);
  return chaves.length > 0 && chaves.every((k) => k.startsWith('$'));
};

/** One step of a path: a name, and the array index it also is when made of digits. */
interface Passo {
  nome: string;
  indice: number | undefined;
}

function passos(chave: string, partes: Parte[]): Passo[] {
  const nomes = chave.split('.');
  if (nomes.some((n) => n === ''))
    throw new FiltroInvalido(partes, 'a path is names separated by dots, none of them empty (e.g. dados.cliente.uf)');
  return nomes.map((nome) => ({ nome, indice: /^(0|[1-9]\d{0,8})$/.test(nome) ? Number(nome) : undefined }));
}

/** The value at the path, or AUSENTE; only own members are followed (never a prototype's). */
function ler(corpo: unknown, caminho: Passo[]): Valor {
  let atual = corpo;
  for (const { nome, indice } of caminho) {
    if (Array.isArray(atual)) {
      if (indice === undefined || indice >= atual.length) return AUSENTE;
      atual = atual[indice];
    } else if (ehObjeto(atual) && Object.hasOwn(atual, nome)) atual = atual[nome];
    else return AUSENTE;
  }
  return atual;
}

/** Membership in a list of literals: a Set for the scalars, deep equality for the rest. */
function pertence(lista: unknown[]): (v: unknown) => boolean {
  const escalares = new Set(lista.filter((x) => typeof x !== 'object' || x === null));
  const compostos = lista.filter((x) => typeof x === 'object' && x !== null);
  return (v) => escalares.has(v) || (typeof v === 'object' && v !== null && compostos.some((c) => iguais(v, c)));
}

class Compilador {
  private condicoes = 0;
  private regexes = 0;

  private contar(partes: Parte[]): void {
    this.condicoes += 1;
    if (this.condicoes > LIMITES_DO_FILTRO.condicoes)
      throw new FiltroInvalido(partes, `a filter holds at most ${LIMITES_DO_FILTRO.condicoes} conditions`);
  }

  filtro(valor: unknown, partes: Parte[], nivel: number): Predicado {
    if (!ehObjeto(valor)) throw new FiltroInvalido(partes, 'a filter must be a JSON object');
    if (nivel > LIMITES_DO_FILTRO.niveis)
      throw new FiltroInvalido(partes, `filters nest at most ${LIMITES_DO_FILTRO.niveis} levels`);
    const todos: Predicado[] = [];
    for (const [chave, v] of Object.entries(valor)) {
      const aqui = [...partes, chave];
      if (chave === '$and' || chave === '$or') {
        if (!Array.isArray(v) || v.length === 0)
          throw new FiltroInvalido(aqui, `${chave} takes a non-empty array of filters`);
        const filhos = v.map((f, i) => this.filtro(f, [...aqui, i], nivel + 1));
        todos.push(chave === '$and' ? (c) => filhos.every((p) => p(c)) : (c) => filhos.some((p) => p(c)));
      } else if (chave === '$not') {
        const filho = this.filtro(v, aqui, nivel + 1);
        todos.push((c) => !filho(c));
      } else if (chave.startsWith('$')) {
        throw new FiltroInvalido(aqui, `unknown combinator ${chave}: a key is a path, $and, $or or $not`);
      } else {
        const caminho = passos(chave, aqui);
        const teste = this.condicao(v, aqui);
        todos.push((c) => teste(ler(c, caminho)));
      }
    }
    if (todos.length === 0) return () => true;
    if (todos.length === 1) return todos[0]!;
    return (c) => todos.every((p) => p(c));
  }

  /** The condition on a path's value (AUSENTE when the body lacks it). */
  private condicao(v: unknown, partes: Parte[]): (valor: Valor) => boolean {
    if (!ehDeOperadores(v)) {
      this.contar(partes);
      return (x) => x !== AUSENTE && iguais(x, v);
    }
    const testes = Object.entries(v).map(([op, operando]) => this.operador(op, operando, [...partes, op]));
    return testes.length === 1 ? testes[0]! : (x) => testes.every((t) => t(x));
  }

  private operador(op: string, operando: unknown, partes: Parte[]): (valor: Valor) => boolean {
    if (!OPERADORES.has(op))
      throw new FiltroInvalido(
        partes,
        `unknown operator ${op}: use $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists or $regex`,
      );
    this.contar(partes);
    switch (op) {
      case '$eq':
        return (x) => x !== AUSENTE && iguais(x, operando);
      case '$ne':
        return (x) => x === AUSENTE || !iguais(x, operando);
      case '$in':
      case '$nin': {
        if (!Array.isArray(operando)) throw new FiltroInvalido(partes, `${op} takes an array of literals`);
        if (operando.length > LIMITES_DO_FILTRO.literais)
          throw new FiltroInvalido(partes, `${op} takes at most ${LIMITES_DO_FILTRO.literais} literals`);
        const em = pertence(operando);
        return op === '$in' ? (x) => x !== AUSENTE && em(x) : (x) => x === AUSENTE || !em(x);
      }
      case '$exists':
        if (typeof operando !== 'boolean') throw new FiltroInvalido(partes, '$exists takes true or false');
        return operando ? (x) => x !== AUSENTE : (x) => x === AUSENTE;
      case '$regex': {
        if (typeof operando !== 'string') throw new FiltroInvalido(partes, '$regex takes a string');
        if (operando.length > LIMITES_DO_FILTRO.regex)
          throw new FiltroInvalido(partes, `$regex takes at most ${LIMITES_DO_FILTRO.regex} characters`);
        this.regexes += 1;
        if (this.regexes > LIMITES_DO_FILTRO.regexes)
          throw new FiltroInvalido(partes, `a filter holds at most ${LIMITES_DO_FILTRO.regexes} $regex operators`);
        let re: RE2JS;
        try {
          re = RE2JS.compile(operando);
        } catch (error) {
          throw new FiltroInvalido(partes, `not an RE2 regular expression: ${(error as Error).message}`);
        }
        if (re.programSize() > LIMITES_DO_FILTRO.programa)
          throw new FiltroInvalido(
            partes,
            `$regex compiles to ${re.programSize()} instructions, more than ${LIMITES_DO_FILTRO.programa}: use smaller counted repetitions ({n})`,
          );
        return (x) => typeof x === 'string' && re.test(x);
      }
      default: {
        const compara = COMPARACOES[op as keyof typeof COMPARACOES];
        if (typeof operando !== 'number' && typeof operando !== 'string')
          throw new FiltroInvalido(partes, `${op} takes a number or a string`);
        const tipo = typeof operando;
        // Numbers with numbers, strings with strings (by UTF-16 code units); any other value does not match.
        return (x) => typeof x === tipo && compara(x as number | string, operando);
      }
    }
  }
}

/**
 * The predicate of a filter; null for null (every body matches). Throws FiltroInvalido for any
 * filter that breaks a rule or passes a limit.
 */
export function compilarFiltro(filtro: unknown): Predicado | null {
  if (filtro === null || filtro === undefined) return null;
  if (!ehObjeto(filtro)) throw new FiltroInvalido([], 'a filter must be a JSON object, or null for every event');
  const bytes = Buffer.byteLength(JSON.stringify(filtro), 'utf8');
  if (bytes > LIMITES_DO_FILTRO.bytes)
    throw new FiltroInvalido(
      [],
      `a filter takes at most ${LIMITES_DO_FILTRO.bytes} bytes as JSON (this one, ${bytes})`,
    );
  const predicado = new Compilador().filtro(filtro, [], 1);
  // One evaluation per call, or a part of the one the caller is in (numaAvaliacao).
  return (corpo) => numaAvaliacao(() => predicado(corpo));
}

/**
 * A stored filter's predicate, for publication. Every stored filter passed compilarFiltro when it
 * was written; should a later release refuse one (a tighter limit), it fails open: the subscription
 * gets every event (an unwanted delivery can be ignored, a lost one cannot be recovered) until the
 * filter is written again.
 */
export function compilarFiltroGuardado(filtro: unknown): Predicado | null {
  try {
    return compilarFiltro(filtro);
  } catch (error) {
    if (error instanceof FiltroInvalido) return null;
    throw error;
  }
}
