import type { ValidateFunction } from 'ajv';
import equal from 'ajv/dist/runtime/equal';
import ucs2length from 'ajv/dist/runtime/ucs2length';
import uri from 'ajv/dist/runtime/uri';
import { fullFormats } from 'ajv-formats/dist/formats';
import { RE2JS } from 're2js';

/**
 * Loads ajv's standalone code (made in a compilation worker, compilacao.worker.cjs) into a validator
 * of this thread. The code is a CommonJS module; its `require` reaches only the modules below, by
 * the names ajv and the worker write: ajv's runtime helpers, ajv-formats' formats, the RE2 engine
 * of the hub's patterns and the hub's `uniqueItems`. Any other name is a bug, and throws.
 *
 * Evaluating the code parses it (V8, lazily): no ajv compilation. Its patterns are compiled by RE2
 * when the module is evaluated (ajv hoists them to the top of the module).
 */
export type Modulos = Record<string, unknown>;

const RUNTIME: Modulos = {
  'ajv/dist/runtime/equal': { default: equal },
  'ajv/dist/runtime/ucs2length': { default: ucs2length },
  'ajv/dist/runtime/uri': { default: uri },
  'ajv-formats/dist/formats': { fullFormats },
  // ajv calls the engine with its flags ("u"), which re2js would take for its own.
  'event-hub:re2': (pattern: string) => RE2JS.compile(pattern),
};

export function carregarCodigo(codigo: string, modulos: Modulos): ValidateFunction {
  const todos = { ...RUNTIME, ...modulos };
  const requerer = (nome: string) => {
    if (!Object.hasOwn(todos, nome)) throw new Error(`standalone validator code requires an unknown module ${nome}`);
    return todos[nome];
  };
  const modulo: { exports: unknown } = { exports: {} };
  // The code was written by ajv in this service's worker from a stored schema, never taken from outside.
  new Function('require', 'module', 'exports', codigo)(requerer, modulo, modulo.exports);
  return modulo.exports as ValidateFunction;
}
