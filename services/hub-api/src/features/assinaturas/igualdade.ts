/**
 * Deep equality of JSON values, as a subscription's filter compares a literal with the delivery
 * body, and the evaluation it counts keys in. Pure: no I/O.
 *
 * Comparing a literal object with an object of the body must count that object's keys. One
 * evaluation remembers each count: without that, every such literal (a hundred in one `$in`,
 * dozens of `$in`) counted the same object again, and a 1 MB object of 100,000 keys took seconds
 * per publication. A publication evaluates the filters of all its subscriptions over one body, so it
 * makes them one evaluation (`numaAvaliacao`): the body's objects are counted once per publication,
 * not once per subscription.
 */

/** The key counts of the objects met during the evaluation under way (evaluation is synchronous). */
let avaliando = false;
let contagens: Map<object, number> | undefined;

function quantasChaves(o: object): number {
  if (!avaliando) return Object.keys(o).length;
  contagens ??= new Map();
  let n = contagens.get(o);
  if (n === undefined) {
    n = Object.keys(o).length;
    contagens.set(o, n);
  }
  return n;
}

/**
 * Runs `avaliar` as one evaluation: the objects compared during it have their keys counted once.
 * A call inside another joins it. What is evaluated must not add or remove keys of the objects it
 * compares meanwhile (changing a value is fine: publication sets `assinatura_id` for each
 * subscription in turn, a key the body always has).
 */
export function numaAvaliacao<T>(avaliar: () => T): T {
  if (avaliando) return avaliar();
  avaliando = true;
  try {
    return avaliar();
  } finally {
    avaliando = false;
    contagens = undefined;
  }
}

/** Deep equality of JSON values (the key order of objects does not matter). */
export function iguais(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!iguais(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (quantasChaves(a) !== quantasChaves(b)) return false;
  // Same number of keys: each of b's in a, with an equal value, makes them equal.
  for (const k of Object.keys(b))
    if (!Object.hasOwn(a, k) || !iguais((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
      return false;
  return true;
}
