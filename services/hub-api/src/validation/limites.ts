/**
 * Limits of what the hub hands to ajv, so that no registered schema and no published `dados` can
 * overflow the stack: ajv compiles and validates recursively, one frame (or more) per level.
 */

/** Deepest nesting accepted in a registered JSON Schema (objects and arrays; `{}` is 1 level). */
export const ESQUEMA_PROFUNDIDADE_MAX = 64;
/** Largest JSON Schema accepted, as JSON text. */
export const ESQUEMA_MAX_BYTES = 256 * 1024;
/**
 * Deepest `dados` validated. A schema's own depth is bounded above, but a recursive `$ref` ("#",
 * "#/$defs/no") walks as deep as the data does; bounding the data bounds the walk.
 */
export const DADOS_PROFUNDIDADE_MAX = 64;

/**
 * How deeply objects and arrays nest in a JSON value (a scalar is 0, `{}` and `[]` are 1). Measured
 * with an explicit stack, so any depth can be measured; stops as soon as `limite` is passed.
 */
export function profundidade(valor: unknown, limite = Number.POSITIVE_INFINITY): number {
  let maior = 0;
  const pendentes: [unknown, number][] = [[valor, 1]];
  for (let atual = pendentes.pop(); atual; atual = pendentes.pop()) {
    const [item, nivel] = atual;
    if (typeof item !== 'object' || item === null) continue;
    if (nivel > maior) maior = nivel;
    if (maior > limite) return maior;
    for (const filho of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof filho === 'object' && filho !== null) pendentes.push([filho, nivel + 1]);
    }
  }
  return maior;
}

/**
 * How many values `dados` has at each level (`[1, children of dados, grandchildren, …]`; an
 * object's key and value count as one), walked with an explicit stack. Undefined as soon as a
 * value is deeper than `limite` levels, as `profundidade` measures them.
 */
export function valoresPorNivel(valor: unknown, limite: number): number[] | undefined {
  const contagem = [1];
  const pendentes: [unknown, number][] = [[valor, 1]];
  for (let atual = pendentes.pop(); atual; atual = pendentes.pop()) {
    const [item, nivel] = atual;
    if (typeof item !== 'object' || item === null) continue;
    if (nivel > limite) return undefined;
    const filhos = Array.isArray(item) ? item : Object.values(item);
    contagem[nivel] = (contagem[nivel] ?? 0) + filhos.length;
    for (const filho of filhos) {
      if (typeof filho === 'object' && filho !== null) pendentes.push([filho, nivel + 1]);
    }
  }
  return contagem;
}

export const mensagemDeProfundidade = (max: number) => `must be at most ${max} levels deep`;
