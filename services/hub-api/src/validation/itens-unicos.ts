import type { ErrorObject, FuncKeywordDefinition } from 'ajv';
import type { SchemaValidateFunction } from 'ajv/dist/types';

/**
 * Numbers that stand for JSON values: two values get the same number exactly when they are equal
 * as JSON Schema compares them (objects whatever the order of their keys, numbers by value, 0 and
 * -0 alike). A composite's number is found from its children's numbers, and each object or array
 * is numbered once (remembered by identity), so numbering all the items of every array of one
 * `dados` reads each value once, however deeply arrays with `uniqueItems` nest.
 *
 * One instance per validation: it holds every value it numbered until it is dropped.
 */
export class Identidades {
  /** Scalars by SameValueZero: "1" and 1 stay apart, 0 and -0 meet. */
  private readonly escalares = new Map<unknown, number>();
  /** Objects and arrays by the numbers of their keys and children. */
  private readonly compostos = new Map<string, number>();
  private readonly vistos = new WeakMap<object, number>();
  private proximo = 0;

  de(valor: unknown): number {
    if (typeof valor !== 'object' || valor === null) return this.numerar(this.escalares, valor);
    const visto = this.vistos.get(valor);
    if (visto !== undefined) return visto;
    const numero = this.numerar(this.compostos, Array.isArray(valor) ? this.doArray(valor) : this.doObjeto(valor));
    this.vistos.set(valor, numero);
    return numero;
  }

  private doArray(itens: unknown[]): string {
    let chave = '[';
    for (let i = 0; i < itens.length; i++) chave += `${this.de(itens[i])},`;
    return chave;
  }

  /** Keys sorted: the same object whatever order it was written in. */
  private doObjeto(objeto: object): string {
    const chaves = Object.keys(objeto);
    if (chaves.length > 1) chaves.sort();
    let chave = '{';
    for (let i = 0; i < chaves.length; i++) {
      const k = chaves[i]!;
      chave += `${this.de(k)}:${this.de((objeto as Record<string, unknown>)[k])},`;
    }
    return chave;
  }

  private numerar<K>(mapa: Map<K, number>, chave: K): number {
    let numero = mapa.get(chave);
    if (numero === undefined) {
      numero = this.proximo++;
      mapa.set(chave, numero);
    }
    return numero;
  }
}

/**
 * `uniqueItems` in linear time, in place of ajv's: ajv compares every pair of items with a deep
 * equality (n²/2 comparisons) unless `items` declares only scalar types, so 20,000 small objects
 * held the event loop for seconds. Same error as ajv's (keyword, message, params `i` and `j`).
 *
 * `identidades` gives the numbering of the validation under way (a fresh one per validation).
 */
export function itensUnicos(identidades: () => Identidades): FuncKeywordDefinition {
  const validate: SchemaValidateFunction = (unicos: boolean, itens: unknown[]) => {
    if (!unicos || itens.length < 2) return true;
    const numeros = identidades();
    const primeiro = new Map<number, number>();
    for (let i = 0; i < itens.length; i++) {
      const numero = numeros.de(itens[i]);
      const j = primeiro.get(numero);
      if (j !== undefined) {
        const erro: Partial<ErrorObject> = {
          keyword: 'uniqueItems',
          params: { i, j },
          message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
        };
        validate.errors = [erro];
        return false;
      }
      primeiro.set(numero, i);
    }
    return true;
  };
  return { keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, validate };
}
