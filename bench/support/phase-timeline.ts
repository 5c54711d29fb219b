// A phase's trace over time, for finding what delays the healthy deliveries (issue 24): every second,
// the CPU each process class spent (bench/support/cpu.ts, this platform's processes and databases only) and
// the depth of every queue GET /fila shows, and from each service's /metrics (hub-api, the worker) the
// longest event-loop stall and the garbage collector's time since the sample before; at the end, every healthy arrival (webhook-id, arrival,
// publication). Written as JSON to BENCH_TRACE_DIR/<phase>.json when that is set; nothing otherwise.
// bench/profiling/phase-timeline-summary.ts turns the files into a timeline.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { contarCpu } from './cpu';

const DIRETORIO = process.env.BENCH_TRACE_DIR;

interface Fila {
  nome: string;
  papel: string;
  mensagens: number;
  consumidores: number;
}

export interface Amostra {
  /** epoch ms */
  em: number;
  /** CPU seconds by process class over the last second */
  cpu: Record<string, number>;
  /** ready messages by queue (the noisy destination's own queue included), and its consumers */
  filas: Record<string, [number, number]>;
  /** per /metrics URL given: [the longest event-loop stall, the GC's time] over the last second, ms */
  laco?: [number, number][];
}

/** From a service's /metrics (prom-client's default metrics): the loop's longest stall since the last read (prom-client resets it then) and the GC's seconds so far. */
async function lerLaco(url: string): Promise<[number, number]> {
  const texto = await (await fetch(url, { signal: AbortSignal.timeout(900) })).text();
  const valor = (linha: RegExp) =>
    texto
      .split('\n')
      .filter((l) => linha.test(l))
      .reduce((soma, l) => soma + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return [valor(/^nodejs_eventloop_lag_max_seconds[ {]/), valor(/^nodejs_gc_duration_seconds_sum\{/)];
}

export interface Rastro {
  /** Stops sampling and writes the file with the arrivals given. */
  fim(chegadas: [string, number, number][]): void;
}

/** Samples every second until `fim` (a no-op without BENCH_TRACE_DIR). */
export function rastrear(
  nome: string,
  filas: () => Promise<Fila[]>,
  bancos: ((nome: string) => boolean) | undefined,
  metricas: string[] = [],
): Rastro {
  if (!DIRETORIO) return { fim() {} };
  const amostras: Amostra[] = [];
  const inicio = Date.now();
  let conta = contarCpu(bancos);
  let lendo = false;
  let gcAntes: number[] | undefined;
  const timer = setInterval(() => {
    if (lendo) return; // a slow GET /fila skips a second rather than piling up
    lendo = true;
    const em = Date.now();
    const r = conta.fim();
    conta = contarCpu(bancos);
    Promise.all([
      filas(),
      Promise.all(metricas.map((url) => lerLaco(url).catch((): [number, number] => [Number.NaN, Number.NaN]))),
    ])
      .then(([lista, lacos]) => {
        const gc = lacos.map(([, s]) => s);
        const laco = lacos.map(([atraso, s], i): [number, number] => [
          Number((atraso * 1000).toFixed(1)),
          Number(((s - (gcAntes?.[i] ?? s)) * 1000).toFixed(1)),
        ]);
        gcAntes = gc;
        amostras.push({
          ...(metricas.length > 0 ? { laco } : {}),
          em,
          cpu: Object.fromEntries(r.porClasse.map(([c, s]) => [c, Number(s.toFixed(3))])),
          filas: Object.fromEntries(
            lista
              .filter((f) => f.mensagens > 0 || f.consumidores > 0)
              .map((f) => [f.nome, [f.mensagens, f.consumidores]]),
          ),
        });
      })
      .catch(() => undefined)
      .finally(() => {
        lendo = false;
      });
  }, 1_000);
  return {
    fim(chegadas) {
      clearInterval(timer);
      mkdirSync(DIRETORIO, { recursive: true });
      const arquivo = path.join(DIRETORIO, `${nome.replace(/[^\w]+/g, '-').replace(/^-|-$/g, '')}.json`);
      writeFileSync(arquivo, JSON.stringify({ nome, inicio, amostras, chegadas }));
    },
  };
}
