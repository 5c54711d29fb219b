import { pointer } from '@hub/http';

/**
 * The checker's view of a schema: a node is one subschema with the JSON Pointer where it stands in
 * its document (its root), so a finding can name the place in the new schema.
 */
export type Esquema = boolean | Record<string, unknown>;

export interface Raiz {
  esquema: Esquema;
  /** draft-07 reads `items: [..]`, `additionalItems` and `dependencies` as 2020-12 reads prefixItems, items, dependent*. */
  draft07: boolean;
}

export interface No {
  s: Esquema;
  caminho: string;
  raiz: Raiz;
}

export interface Erro {
  caminho: string;
  mensagem: string;
}

export const eObjeto = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function raizDe(esquema: Esquema): No {
  const declarado = eObjeto(esquema) ? esquema.$schema : undefined;
  const draft07 = typeof declarado === 'string' && declarado.includes('draft-07');
  return { s: esquema, caminho: '', raiz: { esquema, draft07 } };
}

/** The node at `chaves` below `no` (a missing one reads as `true`: no constraint). */
export function filho(no: No, ...chaves: (string | number)[]): No {
  let s: unknown = no.s;
  for (const chave of chaves) s = eObjeto(s) || Array.isArray(s) ? (s as Record<string, unknown>)[chave] : undefined;
  return {
    s: s === undefined ? true : (s as Esquema),
    caminho: no.caminho + pointer(chaves.map(String)),
    raiz: no.raiz,
  };
}

/** A node made by the checker (a type slice, a value as a schema), placed where `onde` stands. */
export const sintetico = (s: Esquema, onde: No): No => ({ s, caminho: onde.caminho, raiz: onde.raiz });

/** The node without some keywords (what is left beside an allOf, a $ref, an anyOf). */
export function sem(no: No, ...chaves: string[]): No {
  if (!eObjeto(no.s)) return no;
  const resto = { ...no.s };
  for (const chave of chaves) delete resto[chave];
  return { ...no, s: resto };
}

export const tem = (no: No, chave: string): boolean => eObjeto(no.s) && no.s[chave] !== undefined;
export const valor = (no: No, chave: string): unknown => (eObjeto(no.s) ? no.s[chave] : undefined);
export const numero = (no: No, chave: string): number | undefined => {
  const v = valor(no, chave);
  return typeof v === 'number' ? v : undefined;
};

/** Keywords that assert nothing about a document. */
export const ANOTACOES = new Set([
  '$schema',
  '$id',
  '$defs',
  'definitions',
  '$comment',
  '$anchor',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentEncoding',
  'contentMediaType',
]);

/** True for `true`, `{}` and a schema of annotations only: every document. */
export function universal(no: No): boolean {
  if (no.s === true) return true;
  if (!eObjeto(no.s)) return false;
  return Object.keys(no.s).every((k) => ANOTACOES.has(k));
}

export function igual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => igual(x, bb[i]));
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return (
    ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && igual((a as never)[k], (b as never)[k]))
  );
}

/** A value holds a $ref somewhere: two equal texts may then mean different things in two roots. */
export function temReferencia(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(temReferencia);
  if (!eObjeto(v)) return false;
  return Object.entries(v).some(([k, x]) => k === '$ref' || k === '$dynamicRef' || temReferencia(x));
}

function decodificar(segmento: string): string {
  return decodeURIComponent(segmento).replace(/~1/g, '/').replace(/~0/g, '~');
}

const comIdAninhado = new WeakMap<object, boolean>();

/**
 * Whether an `$id` stands anywhere below the root (a property or definition named so counts too:
 * refusing more is safe). A subschema's `$id` changes the base its `$ref`s resolve against, and the
 * resource a JSON Pointer may walk into, so "#/$defs/x" beneath it need not be the root's $defs/x.
 */
export function temIdAninhado(esquema: Esquema): boolean {
  if (!eObjeto(esquema)) return false;
  const visto = comIdAninhado.get(esquema);
  if (visto !== undefined) return visto;
  const pendentes: unknown[] = Object.values(esquema);
  let achou = false;
  for (let v = pendentes.pop(); v !== undefined && !achou; v = pendentes.pop()) {
    if (typeof v !== 'object' || v === null) continue;
    if (!Array.isArray(v) && Object.hasOwn(v, '$id')) achou = true;
    pendentes.push(...Object.values(v));
  }
  comIdAninhado.set(esquema, achou);
  return achou;
}

/**
 * The target of a local `$ref` ("#", "#/$defs/x"), or undefined for one the checker cannot follow
 * (any $ref of a document with an `$id` below its root: `temIdAninhado`).
 */
export function alvo(no: No): No | undefined {
  const ref = valor(no, '$ref');
  if (typeof ref !== 'string') return undefined;
  if (temIdAninhado(no.raiz.esquema)) return undefined;
  const raiz = raizDe(no.raiz.esquema);
  const id = eObjeto(no.raiz.esquema) ? no.raiz.esquema.$id : undefined;
  const local = typeof id === 'string' && ref.startsWith(`${id}#`) ? ref.slice(id.length) : ref;
  if (local !== '#' && !local.startsWith('#/')) return undefined;
  const chaves = local === '#' ? [] : local.slice(2).split('/').map(decodificar);
  const destino = filho({ ...raiz, raiz: no.raiz }, ...chaves);
  const existe = chaves.length === 0 || chaves.reduce<unknown>((s, k) => (eObjeto(s) ? s[k] : undefined), raiz.s);
  return existe === undefined ? undefined : destino;
}
