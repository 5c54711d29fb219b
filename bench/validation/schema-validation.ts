// Schema validation speed, the path every publication takes: `npx tsx bench/validation/schema-validation.ts`
// (BENCH_ITERATIONS, default 20000). Prints a markdown table for docs/benchmarks.md.
import os from 'node:os';
import { ValidadorDeEsquemas } from '../../services/hub-api/src/validation/esquemas';

const iterations = Number(process.env.BENCH_ITERATIONS ?? 20_000);
const esquema = {
  type: 'object',
  required: ['numero', 'cliente', 'itens'],
  properties: {
    numero: { type: 'string', pattern: '^P-[0-9]+$' },
    cliente: {
      type: 'object',
      required: ['email', 'nome'],
      properties: { email: { type: 'string', format: 'email' }, nome: { type: 'string', minLength: 1 } },
      additionalProperties: false,
    },
    itens: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        required: ['sku', 'quantidade', 'preco'],
        properties: {
          sku: { type: 'string' },
          quantidade: { type: 'integer', minimum: 1 },
          preco: { type: 'number', minimum: 0 },
        },
        additionalProperties: false,
      },
    },
    criado_em: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
};
const valido = {
  numero: 'P-123',
  cliente: { email: 'ana@empresa.com.br', nome: 'Ana' },
  itens: Array.from({ length: 20 }, (_, i) => ({ sku: `SKU-${i}`, quantidade: i + 1, preco: 10.5 })),
  criado_em: '2026-11-21T21:00:00.000Z',
};
const invalido = {
  ...valido,
  cliente: { email: 'x' },
  itens: valido.itens.map((item) => ({ ...item, quantidade: 0 })),
};

async function time(name: string, count: number, fn: (i: number) => unknown): Promise<string> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await fn(i);
  const micros = Number(process.hrtime.bigint() - start) / 1000 / count;
  return `| ${name} | ${count} | ${micros.toFixed(1)} | ${Math.round(1e6 / micros).toLocaleString('en-US')} |`;
}

async function main() {
  const validador = new ValidadorDeEsquemas();
  const compilacoes = Math.max(20, Math.round(iterations / 1000));
  const lines = [
    await time('verificarEsquema (meta-schema check + strict compile, in the worker)', compilacoes, () =>
      validador.verificarEsquema(esquema),
    ),
    await time('validarDados, first use of a version (compiles it in the worker)', compilacoes, (i) =>
      validador.validarDados({ id: `frio-${i}`, esquema }, valido),
    ),
  ];
  const versao = { id: 'quente', esquema };
  await validador.validarDados(versao, valido);
  lines.push(
    await time('validarDados, cached, valid (20 items)', iterations, () => validador.validarDados(versao, valido)),
    await time('validarDados, cached, invalid (22 errors, allErrors)', iterations, () =>
      validador.validarDados(versao, invalido),
    ),
  );
  await validador.encerrar();
  process.stdout.write(
    `${os.cpus().length} × ${os.cpus()[0]?.model}, Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}\n\n`,
  );
  process.stdout.write('| operation | iterations | µs each | per second |\n|---|---:|---:|---:|\n');
  for (const line of lines) process.stdout.write(`${line}\n`);
  process.stdout.write(`\ncompilations: ${validador.compilacoes}\n`);
}

void main();
