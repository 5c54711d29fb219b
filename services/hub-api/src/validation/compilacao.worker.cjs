// The worker thread in which ajv runs for hub-api (compilacao.ts), off its event loop: with the hub's
// ajv options (strict, RE2 patterns, formats, union types, the linear `uniqueItems`) it checks a schema
// against its meta-schema (`verificar`: one being registered) and compiles it, and answers with ajv's
// standalone code for it, which hub-api's main thread loads (standalone.ts). One request at a time. Plain CommonJS, so the same file runs under jest, tsx and the
// bundle (found beside this folder's code through __dirname).
const { parentPort } = require('node:worker_threads');
const Ajv = require('ajv').default;
const { _, str } = require('ajv');
const Ajv2020 = require('ajv/dist/2020').default;
const standaloneCode = require('ajv/dist/standalone').default;
const addFormats = require('ajv-formats').default;
const { RE2JS } = require('re2js');

/**
 * Patterns run on RE2 (esquemas.ts says why). In the code, the engine is the module `event-hub:re2`
 * of standalone.ts: re2js's own `compile` takes flags that are not ajv's.
 */
const re2 = Object.assign((pattern) => RE2JS.compile(pattern), { code: 'require("event-hub:re2")' });

const { Identidades, primeiroRepetido } = require('./itens-unicos.cjs');

/**
 * What the keyword calls here, where ajv checks schemas against their meta-schemas: a numbering per
 * array. The loaded code calls hub-api's, with one numbering per validation (esquemas.ts).
 */
const repetidoNesteArray = (itens) => primeiroRepetido(new Identidades(), itens);

/**
 * `uniqueItems` in linear time (itens-unicos.ts numbers the items), as code that ajv writes into the
 * validator, so that standalone code carries it. Same error as ajv's (keyword, params i and j, message).
 */
const itensUnicos = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  error: {
    message: ({ params: { i, j } }) => str`must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
    params: ({ params: { i, j } }) => _`{i: ${i}, j: ${j}}`,
  },
  code(cxt) {
    const { gen, data, schema } = cxt;
    if (!schema) return;
    const repetido = gen.scopeValue('func', {
      ref: repetidoNesteArray,
      code: _`require("event-hub:itens-unicos").primeiroRepetido`,
    });
    // [j, i]: item i repeats item j; undefined when every item is unique.
    const par = gen.const('par', _`${data}.length > 1 ? ${repetido}(${data}) : undefined`);
    cxt.setParams({ i: _`${par}[1]`, j: _`${par}[0]` });
    cxt.fail(_`${par} !== undefined`);
  },
};

const OPTIONS = {
  strict: true,
  code: { regExp: re2, source: true },
  allErrors: false,
  allowUnionTypes: true,
  addUsedSchema: false,
  logger: false,
};
const preparar = (ajv) => addFormats(ajv).removeKeyword('uniqueItems').addKeyword(itensUnicos);
const TODOS = { ...OPTIONS, allErrors: true };
const ajvs = {
  '2020-12': { rapido: preparar(new Ajv2020(OPTIONS)), detalhado: preparar(new Ajv2020(TODOS)) },
  'draft-07': { rapido: preparar(new Ajv(OPTIONS)), detalhado: preparar(new Ajv(TODOS)) },
};

/** The length of the longest function of a validator and of those it calls (esquemas.ts, fatorDoCodigo). */
function maiorFuncao(validador) {
  let maior = 0;
  const vistas = new Set();
  const pendentes = [validador];
  for (let funcao = pendentes.pop(); funcao; funcao = pendentes.pop()) {
    if (typeof funcao !== 'function' || vistas.has(funcao)) continue;
    vistas.add(funcao);
    maior = Math.max(maior, funcao.toString().length);
    for (const nomes of Object.values(funcao.source?.scopeValues ?? {}))
      for (const nome of nomes ?? []) pendentes.push(nome.value?.ref);
  }
  return maior;
}

function gerar(ajv, schema) {
  try {
    const validador = ajv.compile(schema);
    return { codigo: standaloneCode(ajv, validador), maiorFuncao: maiorFuncao(validador) };
  } finally {
    ajv.removeSchema(schema);
  }
}

/**
 * The code of one variant. A schema too wide for ajv to nest a block per keyword (the fast variant
 * overflows the stack) gets the every-error code in its place, as esquemas.ts always did.
 */
function compilar({ esquema, draft, variante, verificar }) {
  // A schema being registered: checked against its meta-schema first, its errors as ajv gives them.
  if (verificar && !ajvs[draft].rapido.validateSchema(esquema))
    return { compilou: false, errosDoEsquema: ajvs[draft].rapido.errors ?? [] };
  const schema = esquema.$id === undefined ? { $id: 'urn:event-hub:esquema', ...esquema } : esquema;
  const par = ajvs[draft];
  if (variante === 'detalhado') return { ...gerar(par.detalhado, schema), detalhado: true };
  try {
    return { ...gerar(par.rapido, schema), detalhado: false };
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return { ...gerar(par.detalhado, schema), detalhado: true };
  }
}

// The meta-schemas compiled, then ready: the time limit starts with each schema, not with this start-up.
for (const par of Object.values(ajvs)) for (const ajv of [par.rapido, par.detalhado]) ajv.validateSchema({});
parentPort.postMessage({ pronto: true });

parentPort.on('message', (pedido) => {
  const inicio = performance.now();
  try {
    parentPort.postMessage({ compilou: true, ...compilar(pedido), ms: performance.now() - inicio });
  } catch (error) {
    parentPort.postMessage({
      compilou: false,
      estourou: error instanceof RangeError,
      mensagem: String(error?.message ?? error),
      ms: performance.now() - inicio,
    });
  }
});
