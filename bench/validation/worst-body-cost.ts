// The worst bodies registered schemas accept, timed: `npx tsx bench/validation/worst-body-cost.ts`
// from the repository root. For each shape, dados are filled up to 1 MB of JSON and then cut to the
// most values the cost budget accepts (ORCAMENTO_POR_CORPO), so each line times the dearest body the
// hub would validate for that schema. Prints a markdown table for docs/benchmarks.md.
import os from 'node:os';
import { ORCAMENTO_POR_CORPO } from '../../services/hub-api/src/validation/custo';
import { ValidadorDeEsquemas } from '../../services/hub-api/src/validation/esquemas';
import { DADOS_PROFUNDIDADE_MAX, valoresPorNivel } from '../../services/hub-api/src/validation/limites';

const MB = 1_000_000;
type Esquema = Record<string, unknown>;

const consts = (n: number) => Array.from({ length: n }, (_, i) => ({ const: i }));
const aninhado = (niveis: number, largura: number): Esquema =>
  niveis === 0 ? { type: 'integer' } : { anyOf: [...consts(largura - 1), aninhado(niveis - 1, largura)] };
/** `if`/`then`/`else` nested n deep (`then` given through fromEntries: a literal would be a thenable). */
const seEntao = (n: number): Esquema =>
  n === 0
    ? { type: 'integer' }
    : Object.fromEntries([
        ['if', { const: n }],
        ['then', { type: 'integer' }],
        ['else', seEntao(n - 1)],
      ]);
const nomes = (n: number) => Array.from({ length: n }, (_, i) => `p${i}`);

/** Items `item(i)` until the JSON of the array would pass 1 MB. */
function ate1MB(item: (i: number) => unknown): unknown[] {
  const itens: unknown[] = [];
  for (let i = 0, tamanho = 2; ; i++) {
    const valor = item(i);
    tamanho += JSON.stringify(valor).length + 1;
    if (tamanho > MB) return itens;
    itens.push(valor);
  }
}
/** Keys `chave(i): valor` until the JSON of the object would pass 1 MB. */
function objetoAte1MB(chave: (i: number) => string, valor: unknown): Record<string, unknown> {
  return Object.fromEntries(ate1MB((i) => chave(i)).map((k) => [k, valor]));
}

interface Caso {
  nome: string;
  esquema: Esquema;
  dados: unknown;
}
const casos: Caso[] = [
  {
    nome: 'items anyOf 500 consts, each item the last',
    esquema: { type: 'array', items: { anyOf: consts(500) } },
    dados: ate1MB(() => 499),
  },
  {
    nome: 'items anyOf 500 consts, every item fails',
    esquema: { type: 'array', items: { anyOf: consts(500) } },
    dados: ate1MB(() => -1),
  },
  {
    nome: 'items anyOf 5,000 consts, every item fails',
    esquema: { type: 'array', items: { anyOf: consts(5_000) } },
    dados: ate1MB(() => -1),
  },
  {
    nome: 'items anyOf 3 consts, each item the last',
    esquema: { type: 'array', items: { anyOf: consts(3) } },
    dados: ate1MB(() => 2),
  },
  {
    nome: 'items anyOf [string, null, integer]',
    esquema: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'null' }, { type: 'integer' }] } },
    dados: ate1MB(() => 0),
  },
  {
    nome: 'items anyOf [string, integer], every item fails',
    esquema: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
    dados: ate1MB(() => null),
  },
  {
    nome: 'items enum of 5,000 numbers, each item the last',
    esquema: { type: 'array', items: { enum: consts(5_000).map((c) => c.const) } },
    dados: ate1MB(() => 4_999),
  },
  {
    nome: 'items oneOf 50 objects (required p<i>)',
    esquema: {
      type: 'array',
      items: {
        oneOf: nomes(50).map((p) => ({ type: 'object', required: [p], properties: { [p]: { type: 'integer' } } })),
      },
    },
    dados: ate1MB(() => ({ p49: 0 })),
  },
  {
    nome: 'items nested anyOf (4 levels × 10 branches)',
    esquema: { type: 'array', items: aninhado(4, 10) },
    dados: ate1MB(() => 1_000),
  },
  { nome: 'items if/then/else chain of 50', esquema: { type: 'array', items: seEntao(50) }, dados: ate1MB(() => 0) },
  {
    nome: 'contains anyOf 100 consts, minContains 1,000',
    esquema: { type: 'array', contains: { anyOf: consts(100) }, minContains: 1_000 },
    dados: ate1MB(() => 99),
  },
  {
    nome: 'patternProperties 20 patterns, one object',
    esquema: {
      type: 'object',
      patternProperties: Object.fromEntries(nomes(20).map((p) => [`^${p}_`, { type: 'integer' }])),
    },
    dados: objetoAte1MB((i) => `p19_${i}`, 0),
  },
  {
    nome: 'items pattern (RE2), short strings',
    esquema: { type: 'array', items: { type: 'string', pattern: '^v[0-9]+$' } },
    dados: ate1MB(() => 'v1'),
  },
  {
    nome: 'dependentSchemas on 40 properties, objects with all of them',
    esquema: {
      type: 'array',
      items: {
        type: 'object',
        properties: Object.fromEntries(nomes(40).map((p) => [p, { type: 'integer' }])),
        dependentSchemas: Object.fromEntries(
          nomes(40).map((p) => [
            p,
            { required: nomes(40), properties: Object.fromEntries(nomes(40).map((q) => [q, { type: 'integer' }])) },
          ]),
        ),
      },
    },
    dados: ate1MB(() => Object.fromEntries(nomes(40).map((p) => [p, 0]))),
  },
  {
    nome: 'items with 1,000 properties, empty objects',
    esquema: {
      type: 'array',
      items: { type: 'object', properties: Object.fromEntries(nomes(1_000).map((p) => [p, { type: 'string' }])) },
    },
    dados: ate1MB(() => ({})),
  },
  {
    nome: 'items with 3,000 properties (too wide to stop at the first error)',
    esquema: {
      type: 'array',
      items: { type: 'object', properties: Object.fromEntries(nomes(3_000).map((p) => [p, { type: 'string' }])) },
    },
    dados: ate1MB(() => ({})),
  },
  {
    nome: 'uniqueItems over small objects',
    esquema: { type: 'array', uniqueItems: true },
    dados: ate1MB((i) => ({ i })),
  },
  {
    nome: 'any JSON value (recursive), arrays of arrays',
    esquema: {
      anyOf: [
        { type: ['string', 'number', 'boolean', 'null'] },
        { type: 'array', items: { $ref: '#' } },
        { type: 'object', additionalProperties: { $ref: '#' } },
      ],
    },
    dados: ate1MB(() => [[0, 0], { a: [0] }]),
  },
];

/** The longest prefix of an array (or of an object's keys) whose cost bound fits the budget. */
async function noOrcamento(validador: ValidadorDeEsquemas, id: string, esquema: Esquema, dados: unknown) {
  const cabe = async (valor: unknown) =>
    (await validador.custoDosDados({ id, esquema }, valor))! <= ORCAMENTO_POR_CORPO;
  if (await cabe(dados)) return dados;
  const lista = Array.isArray(dados) ? dados : Object.entries(dados as object);
  const corte = (n: number) =>
    Array.isArray(dados) ? lista.slice(0, n) : Object.fromEntries(lista.slice(0, n) as [string, unknown][]);
  let [dentro, fora] = [0, lista.length];
  while (fora - dentro > 1) {
    const meio = Math.floor((dentro + fora) / 2);
    if (await cabe(corte(meio))) dentro = meio;
    else fora = meio;
  }
  return corte(dentro);
}

async function medir(validador: ValidadorDeEsquemas, id: string, esquema: Esquema, dados: unknown) {
  const inicio = process.hrtime.bigint();
  const resultado = await validador.validarDados({ id, esquema }, dados);
  return { ms: Number(process.hrtime.bigint() - inicio) / 1e6, resultado };
}

async function medirTodos(): Promise<string[]> {
  const linhas: string[] = [];
  for (const [i, caso] of casos.entries()) {
    const validador = new ValidadorDeEsquemas({ limiteMs: 600_000 });
    const registro = await validador.verificarEsquema(caso.esquema);
    if (registro.erros.length > 0) {
      linhas.push(`| ${caso.nome} | schema refused: ${registro.erros[0]!.mensagem.slice(0, 60)}… | | | | |`);
      continue;
    }
    validador.lembrar(`v${i}`, registro.validador!);
    await medir(validador, `v${i}`, caso.esquema, caso.dados);
    const inteiro = await medir(validador, `v${i}`, caso.esquema, caso.dados);
    const cortado = await noOrcamento(validador, `v${i}`, caso.esquema, caso.dados);
    const valores = valoresPorNivel(cortado, DADOS_PROFUNDIDADE_MAX)!;
    const custo = await validador.custoDosDados({ id: `v${i}`, esquema: caso.esquema }, cortado);
    // The first run of a body compiles nothing (done above) but warms the code; the second is timed.
    await medir(validador, `v${i}`, caso.esquema, cortado);
    const { ms, resultado } = await medir(validador, `v${i}`, caso.esquema, cortado);
    const tamanho = (JSON.stringify(cortado).length / 1024).toFixed(0);
    linhas.push(
      `| ${caso.nome} | ${inteiro.resultado.valido ? 'valid' : `refused (${inteiro.ms.toFixed(1)} ms)`} | ${valores.reduce((a, b) => a + b, 0)} values, ${tamanho} KiB | ${custo} | ${ms.toFixed(1)} | ${resultado.valido ? 'valid' : `invalid, ${resultado.erros.length} erros`} |`,
    );
    await validador.encerrar();
  }
  return linhas;
}

void medirTodos().then((linhas) => {
  process.stdout.write(
    `${os.cpus().length} × ${os.cpus()[0]?.model}, Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}\n\n`,
  );
  process.stdout.write(
    '| shape | the 1 MB body | dearest body within the budget | cost bound (checks) | ms | answer |\n|---|---|---|---:|---:|---|\n',
  );
  for (const linha of linhas) process.stdout.write(`${linha}\n`);
});
