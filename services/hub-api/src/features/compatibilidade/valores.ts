import { eObjeto, igual, type No, type Raiz, valor } from './no';

/** JSON types as slices: `number` covers every number, integers included. */
export type Tipo = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';
export const TODOS: Tipo[] = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'];

/** The types one node lets through (`number` brings `integer` along). */
export function tiposDe(no: No): Set<Tipo> {
  const tipo = valor(no, 'type');
  if (tipo === undefined) return new Set(TODOS);
  const lista = (Array.isArray(tipo) ? tipo : [tipo]) as Tipo[];
  const tipos = new Set(lista);
  if (tipos.has('number')) tipos.add('integer');
  return tipos;
}

/** The types all the conjuncts let through. */
export function tiposDeTodos(a: No[]): Set<Tipo> {
  let tipos = new Set(TODOS);
  for (const no of a) {
    const deste = tiposDe(no);
    tipos = new Set([...tipos].filter((t) => deste.has(t)));
  }
  return tipos;
}

export function tipoDoValor(v: unknown): Tipo {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v as Tipo;
}

/** The values of a node's const or enum; undefined when it has neither. */
export function valoresDoNo(no: No): unknown[] | undefined {
  if (eObjeto(no.s) && Object.hasOwn(no.s, 'const')) return [no.s.const];
  const lista = valor(no, 'enum');
  return Array.isArray(lista) ? lista : undefined;
}

/**
 * A's documents when they are finitely many (a const or enum in a conjunct): the values every
 * conjunct's const/enum holds and its types let through; undefined when A is not finite.
 */
export function valoresDe(a: No[]): unknown[] | undefined {
  let valores: unknown[] | undefined;
  for (const no of a) {
    const deste = valoresDoNo(no);
    if (!deste) continue;
    valores = valores ? valores.filter((v) => deste.some((w) => igual(v, w))) : [...deste];
  }
  if (!valores) return undefined;
  const tipos = tiposDeTodos(a);
  const unicos: unknown[] = [];
  for (const v of valores) if (tipos.has(tipoDoValor(v)) && !unicos.some((w) => igual(v, w))) unicos.push(v);
  return unicos;
}

const RAIZ_DOS_VALORES: Raiz = { esquema: true, draft07: false };

/**
 * One value as a schema whose only document it is, so that the same comparisons decide whether B
 * accepts it (`x-valor` lets the string and array slices test it exactly: pattern, format, uniqueItems).
 */
export function esquemaDoValor(v: unknown, onde: No): No {
  return { s: comoEsquema(v), caminho: onde.caminho, raiz: RAIZ_DOS_VALORES };
}

function comoEsquema(v: unknown): Record<string, unknown> {
  if (v === null) return { type: 'null' };
  if (typeof v === 'boolean') return { type: 'boolean', 'x-valor': v };
  if (typeof v === 'number') return { type: tipoDoValor(v), minimum: v, maximum: v, 'x-valor': v };
  if (typeof v === 'string') {
    const tamanho = [...v].length;
    return { type: 'string', minLength: tamanho, maxLength: tamanho, 'x-valor': v };
  }
  if (Array.isArray(v)) {
    return {
      type: 'array',
      prefixItems: v.map(comoEsquema),
      items: false,
      minItems: v.length,
      maxItems: v.length,
      'x-valor': v,
    };
  }
  const objeto = v as Record<string, unknown>;
  const properties = Object.fromEntries(Object.entries(objeto).map(([k, x]) => [k, comoEsquema(x)]));
  const required = Object.keys(objeto);
  return { type: 'object', properties, required, additionalProperties: false, 'x-valor': v };
}

/** `x-valor` of the conjunct that holds one: A is that single value. */
export function valorExato(a: No[]): { v: unknown } | undefined {
  for (const no of a) if (eObjeto(no.s) && Object.hasOwn(no.s, 'x-valor')) return { v: no.s['x-valor'] };
  return undefined;
}

export const mostrar = (v: unknown) => {
  const texto = JSON.stringify(v);
  return texto.length > 60 ? `${texto.slice(0, 57)}...` : texto;
};
