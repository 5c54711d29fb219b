// The worker thread that compiles a schema being registered (compilacao.ts), off hub-api's event
// loop: with ajv's options of the hub (esquemas.ts: strict, RE2 patterns, formats, union types) it
// compiles the schema and says whether it compiled, and how long it took. Plain CommonJS, so the
// same file runs under jest, tsx and the bundle (found beside this folder's code through __dirname).
const { parentPort } = require('node:worker_threads');
const Ajv = require('ajv').default;
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;
const { RE2JS } = require('re2js');

const re2 = Object.assign((pattern) => RE2JS.compile(pattern), { code: 'require("re2js").RE2JS.compile' });
const OPTIONS = {
  strict: true,
  code: { regExp: re2 },
  allErrors: false,
  allowUnionTypes: true,
  addUsedSchema: false,
  logger: false,
};
const TODOS = { ...OPTIONS, allErrors: true };
const ajvs = {
  '2020-12': { rapido: addFormats(new Ajv2020(OPTIONS)), detalhado: addFormats(new Ajv2020(TODOS)) },
  'draft-07': { rapido: addFormats(new Ajv(OPTIONS)), detalhado: addFormats(new Ajv(TODOS)) },
};

/** As esquemas.ts does: a schema too wide to nest a block per keyword is compiled keeping every error. */
function compilar(par, schema) {
  try {
    par.rapido.compile(schema);
    par.rapido.removeSchema(schema);
  } catch (error) {
    par.rapido.removeSchema(schema);
    if (!(error instanceof RangeError)) throw error;
    par.detalhado.compile(schema);
    par.detalhado.removeSchema(schema);
  }
}

// Loaded (ajv and its options ready): the time limit starts with the schema, not with this start-up.
parentPort.postMessage({ pronto: true });

parentPort.on('message', ({ esquema, draft }) => {
  const inicio = performance.now();
  try {
    const schema = esquema.$id === undefined ? { $id: 'urn:event-hub:esquema', ...esquema } : esquema;
    compilar(ajvs[draft], schema);
    parentPort.postMessage({ compilou: true, ms: performance.now() - inicio });
  } catch (error) {
    parentPort.postMessage({
      compilou: false,
      ms: performance.now() - inicio,
      mensagem: String(error?.message ?? error),
    });
  }
});
