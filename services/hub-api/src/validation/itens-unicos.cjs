// `uniqueItems` in linear time, in place of ajv's: ajv compares every pair of items with a deep
// equality (n²/2 comparisons) unless `items` declares only scalar types, so 20,000 small objects held
// the event loop for seconds. Plain CommonJS, because both sides use it: the compilation worker
// (compilacao.worker.cjs: the keyword's code, and its meta-schema checks) and hub-api's thread (the
// loaded validators, through standalone.ts). Types in itens-unicos.d.cts.

/**
 * Numbers that stand for JSON values: two values get the same number exactly when they are equal
 * as JSON Schema compares them (objects whatever the order of their keys, numbers by value, 0 and
 * -0 alike). A composite's number is found from its children's numbers, and each object or array
 * is numbered once (remembered by identity), so numbering all the items of every array of one
 * `dados` reads each value once, however deeply arrays with `uniqueItems` nest.
 *
 * One instance per validation: it holds every value it numbered until it is dropped.
 */
class Identidades {
  /** Scalars by SameValueZero: "1" and 1 stay apart, 0 and -0 meet. */
  #escalares = new Map();
  /** Objects and arrays by the numbers of their keys and children. */
  #compostos = new Map();
  #vistos = new WeakMap();
  #proximo = 0;

  de(valor) {
    if (typeof valor !== 'object' || valor === null) return this.#numerar(this.#escalares, valor);
    const visto = this.#vistos.get(valor);
    if (visto !== undefined) return visto;
    const numero = this.#numerar(this.#compostos, Array.isArray(valor) ? this.#doArray(valor) : this.#doObjeto(valor));
    this.#vistos.set(valor, numero);
    return numero;
  }

  #doArray(itens) {
    let chave = '[';
    for (let i = 0; i < itens.length; i++) chave += `${this.de(itens[i])},`;
    return chave;
  }

  /** Keys sorted: the same object whatever order it was written in. */
  #doObjeto(objeto) {
    const chaves = Object.keys(objeto);
    if (chaves.length > 1) chaves.sort();
    let chave = '{';
    for (let i = 0; i < chaves.length; i++) chave += `${this.de(chaves[i])}:${this.de(objeto[chaves[i]])},`;
    return chave;
  }

  #numerar(mapa, chave) {
    let numero = mapa.get(chave);
    if (numero === undefined) {
      numero = this.#proximo++;
      mapa.set(chave, numero);
    }
    return numero;
  }
}

/**
 * `[j, i]` when item i is the first to repeat an earlier item j; undefined when all are unique. The
 * keyword's code reports ajv's own error then (keyword, message, params `i` and `j`).
 * `numeros` is the numbering of the validation under way (a fresh one per validation).
 */
function primeiroRepetido(numeros, itens) {
  const primeiro = new Map();
  for (let i = 0; i < itens.length; i++) {
    const numero = numeros.de(itens[i]);
    const j = primeiro.get(numero);
    if (j !== undefined) return [j, i];
    primeiro.set(numero, i);
  }
  return undefined;
}

module.exports = { Identidades, primeiroRepetido };
