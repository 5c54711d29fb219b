// The traces bench/support/phase-timeline.ts wrote (BENCH_TRACE_DIR) as timelines, one line per second (or per
// `npx tsx bench/profiling/phase-timeline-summary.ts <dir> [seconds per line]`): the CPU of the worker,
// hub-api, the gateway, PostgreSQL and RabbitMQ in that interval, the ready messages of the shared work queue,
// of the destination queues and of the delay queues, hub-api's and the worker's longest event-loop
// stall and GC time, and the healthy deliveries published in it (how many, p50 and max of
// publication → arrival). Given PostgreSQL's server log (BENCH_PG_LOG; log_checkpoints is on by
// default), it also marks the seconds a checkpoint was under way and says how many of the
// deliveries slower than BENCH_LENTA_MS (40) were published or travelling during one.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Amostra } from '../support/phase-timeline';
import { percentile } from '../support/paced-load';

const [diretorio = process.env.BENCH_TRACE_DIR ?? '.', passoTexto = '1'] = process.argv.slice(2);
const passo = Number(passoTexto) * 1000;
const CLASSES = [
  'delivery-worker',
  'hub-api',
  'gateway',
  'PostgreSQL',
  'RabbitMQ',
  'benchmark (load and receivers)',
  'other',
];
const ROTULOS = ['worker', 'hub-api', 'gw', 'pg', 'rabbit', 'bench', 'other'];
const LENTA_MS = Number(process.env.BENCH_LENTA_MS ?? 40);

interface Checkpoint {
  inicio: number;
  fim: number;
  motivo: string;
  buffers: number;
}

/** The checkpoints a server log names ("checkpoint starting: wal" … "checkpoint complete: wrote N buffers"). */
function checkpoints(arquivo: string | undefined): Checkpoint[] {
  if (!arquivo) return [];
  // log_line_prefix '%m …': "2026-11-27 01:31:02.389 UTC"
  const quando = (linha: string) => Date.parse(`${linha.slice(0, 23).replace(' ', 'T')}Z`);
  const lista: Checkpoint[] = [];
  let aberto: { inicio: number; motivo: string } | undefined;
  for (const linha of readFileSync(arquivo, 'utf8').split('\n')) {
    const comeco = /checkpoint starting: (.*)$/.exec(linha);
    const fim = /checkpoint complete: wrote (\d+) buffers/.exec(linha);
    if (comeco) aberto = { inicio: quando(linha), motivo: comeco[1]! };
    else if (fim && aberto) {
      lista.push({ ...aberto, fim: quando(linha), buffers: Number(fim[1]) });
      aberto = undefined;
    }
  }
  return lista.filter((c) => Number.isFinite(c.inicio) && Number.isFinite(c.fim));
}

const CHECKPOINTS = checkpoints(process.env.BENCH_PG_LOG);
const sob = (de: number, ate: number) => CHECKPOINTS.some((c) => c.inicio <= ate && c.fim >= de);

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
  const lentas = chegadas.filter(([, chegada, recebido]) => chegada - recebido > LENTA_MS);
  if (CHECKPOINTS.length) {
    const [de, ate] = [Math.min(...chegadas.map(([, , r]) => r)), Math.max(...chegadas.map(([, c]) => c))];
    for (const c of CHECKPOINTS.filter((k) => k.inicio <= ate && k.fim >= de))
      console.log(
        `checkpoint (${c.motivo}) from ${((c.inicio - inicio) / 1000).toFixed(1)} s to ${((c.fim - inicio) / 1000).toFixed(1)} s, ${c.buffers} buffers written`,
      );
    console.log(
      `${lentas.length} of ${chegadas.length} deliveries over ${LENTA_MS} ms, ` +
        `${lentas.filter(([, chegada, recebido]) => sob(recebido, chegada)).length} of them during a checkpoint`,
    );
  }
  console.log(
    [
      't s',
      ...ROTULOS.map((r) => `${r} cpu`),
      'shared',
      'destino',
      'delay',
      'published',
      'p50 ms',
      'max ms',
      'hub-api stall/gc ms',
      'worker stall/gc ms',
      ...(CHECKPOINTS.length ? ['checkpoint'] : []),
    ].join('\t'),
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
        latencias.length ? percentile(latencias, 50).toFixed(0) : '',
        latencias.length ? latencias.at(-1)!.toFixed(0) : '',
        // The longest event-loop stall of the interval and the GC's time in it
        // (bench/support/phase-timeline.ts).
        ...[0, 1].map((i) => {
          const lacos = nelas.flatMap((a) => (a.laco?.[i] ? [a.laco[i]] : []));
          if (lacos.length === 0) return '';
          return `${Math.max(...lacos.map(([atraso]) => atraso)).toFixed(0)}/${lacos.reduce((s, [, gc]) => s + gc, 0).toFixed(0)}`;
        }),
        ...(CHECKPOINTS.length ? [sob(t, t + passo) ? 'yes' : ''] : []),
      ].join('\t'),
    );
  }
}
