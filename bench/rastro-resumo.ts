// The traces bench/rastro.ts wrote (BENCH_TRACE_DIR) as timelines, one line per second (or per
// `npx tsx bench/rastro-resumo.ts <dir> [seconds per line]`): the CPU of the worker, hub-api, the
// gateway, PostgreSQL and RabbitMQ in that interval, the ready messages of the shared work queue, of
// the destination queues and of the delay queues, and the healthy deliveries published in it (how
// many, p50 and max of publication → arrival).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Amostra } from './rastro';

const [diretorio = process.env.BENCH_TRACE_DIR ?? '.', passoTexto = '1'] = process.argv.slice(2);
const passo = Number(passoTexto) * 1000;
const CLASSES = ['delivery-worker', 'hub-api', 'gateway', 'PostgreSQL', 'RabbitMQ', 'benchmark (load and receivers)'];
const ROTULOS = ['worker', 'hub-api', 'gw', 'pg', 'rabbit', 'bench'];

const pct = (xs: number[], p: number) =>
  xs.length ? xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]! : NaN;

for (const arquivo of readdirSync(diretorio)
  .filter((a) => a.endsWith('.json'))
  .sort()) {
  const { nome, inicio, amostras, chegadas } = JSON.parse(readFileSync(path.join(diretorio, arquivo), 'utf8')) as {
    nome: string;
    inicio: number;
    amostras: Amostra[];
    chegadas: [string, number, number][];
  };
  console.log(`\n${nome}`);
  console.log(
    ['t s', ...ROTULOS.map((r) => `${r} cpu`), 'shared', 'destino', 'delay', 'published', 'p50 ms', 'max ms'].join(
      '\t',
    ),
  );
  const fim = Math.max(...amostras.map((a) => a.em), ...chegadas.map(([, c]) => c));
  for (let t = inicio; t < fim; t += passo) {
    const nelas = amostras.filter((a) => a.em > t && a.em <= t + passo);
    const cpu = CLASSES.map((c) => nelas.reduce((s, a) => s + (a.cpu[c] ?? 0), 0) / (passo / 1000));
    const ultima = nelas.at(-1);
    const filas = Object.entries(ultima?.filas ?? {});
    const soma = (f: (nome: string) => boolean) => filas.filter(([n]) => f(n)).reduce((s, [, [m]]) => s + m, 0);
    const latencias = chegadas
      .filter(([, , recebido]) => recebido > t && recebido <= t + passo)
      .map(([, chegada, recebido]) => chegada - recebido)
      .sort((a, b) => a - b);
    console.log(
      [
        ((t - inicio) / 1000).toFixed(0),
        ...cpu.map((c) => c.toFixed(2)),
        ultima ? soma((n) => n.endsWith('.entregas.v2')) : '',
        ultima ? soma((n) => n.includes('.destino.')) : '',
        ultima ? soma((n) => n.includes('atraso') || /\d+ms$/.test(n)) : '',
        latencias.length,
        latencias.length ? pct(latencias, 50).toFixed(0) : '',
        latencias.length ? latencias.at(-1)!.toFixed(0) : '',
      ].join('\t'),
    );
  }
}
