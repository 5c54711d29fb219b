import type { Contexto } from './contexto';
import { alvo, eObjeto, filho, igual, type No, numero, valor } from './no';
import { subconjunto } from './subconjunto';
import { tiposDe, tiposDeTodos, tipoDoValor, valoresDe, valoresDoNo } from './valores';

/**
 * A proof that no document satisfies both all of `a` and `c` (false: not proven, not "they overlap").
 * Read: disjoint types, values the other side refuses, a property both require whose subschemas are
 * disjoint (the usual discriminator of a oneOf), or a `not` in A whose subschema contains C.
 */
export function disjuntos(a: No[], c: No, ctx: Contexto, nivel = 0): boolean {
  if (nivel > 8) return false;
  const resolvido = valor(c, '$ref') !== undefined ? alvo(c) : c;
  if (!resolvido) return false;
  if (resolvido.s === false || a.some((x) => x.s === false)) return true;
  const tiposA = tiposDeTodos(a);
  const tiposC = tiposDe(resolvido);
  if (![...tiposA].some((t) => tiposC.has(t))) return true;
  const valoresA = valoresDe(a);
  if (valoresA?.every((v) => recusa(resolvido, v))) return true;
  const valoresC = valoresDoNo(resolvido);
  if (valoresC?.every((v) => a.some((x) => recusa(x, v)))) return true;
  if (a.some((x) => valor(x, 'not') !== undefined && subconjunto([resolvido], filho(x, 'not'), ctx).length === 0))
    return true;
  return discriminador(a, resolvido, ctx, nivel);
}

function discriminador(a: No[], c: No, ctx: Contexto, nivel: number): boolean {
  const requeridas = (no: No) => (Array.isArray(valor(no, 'required')) ? (valor(no, 'required') as string[]) : []);
  const tiposA = tiposDeTodos(a);
  if (!(tiposA.size === 1 && tiposA.has('object')) && !(tiposDe(c).size === 1 && tiposDe(c).has('object')))
    return false;
  const comunsRequeridas = requeridas(c).filter((r) => a.some((x) => requeridas(x).includes(r)));
  return comunsRequeridas.some((nome) => {
    const deC = filho(c, 'properties', nome);
    const deA = a.filter((x) => eObjeto(valor(x, 'properties'))).map((x) => filho(x, 'properties', nome));
    return deA.length > 0 && disjuntos(deA, deC, ctx, nivel + 1);
  });
}

/** Whether one node refuses a value, read from the keywords that say so plainly. */
function recusa(no: No, v: unknown): boolean {
  if (no.s === false) return true;
  if (!eObjeto(no.s)) return false;
  const tipos = tiposDe(no);
  const tipo = tipoDoValor(v);
  if (!tipos.has(tipo) && !(tipo === 'integer' && tipos.has('number'))) return true;
  const valores = valoresDoNo(no);
  if (valores && !valores.some((w) => igual(v, w))) return true;
  if (typeof v === 'number') {
    const min = numero(no, 'minimum');
    const max = numero(no, 'maximum');
    if ((min !== undefined && v < min) || (max !== undefined && v > max)) return true;
  }
  if (eObjeto(v)) {
    const req = valor(no, 'required');
    if (Array.isArray(req) && req.some((r) => typeof r === 'string' && !Object.hasOwn(v, r))) return true;
    const props = valor(no, 'properties');
    if (eObjeto(props))
      return Object.entries(v).some(([k, x]) => props[k] !== undefined && recusa(filho(no, 'properties', k), x));
  }
  return false;
}
