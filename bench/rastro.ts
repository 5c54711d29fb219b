// A phase's trace over time, for finding what delays the healthy deliveries (issue 24): every second,
// the CPU each process class spent (bench/cpu.ts, this platform's processes and databases only) and
// the depth of every queue GET /fila shows; at the end, every healthy arrival (webhook-id, arrival,
// publication). Written as JSON to BENCH_TRACE_DIR/<phase>.json when that is set; nothing otherwise.
// bench/rastro-resumo.ts turns the files into a timeline.
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
): Rastro {
  if (!DIRETORIO) return { fim() {} };
  const amostras: Amostra[] = [];
  const inicio = Date.now();
  let conta = contarCpu(bancos);
  let lendo = false;
  const timer = setInterval(() => {
    if (lendo) return; // a slow GET /fila skips a second rather than piling up
    lendo = true;
    const em = Date.now();
    const r = conta.fim();
    conta = contarCpu(bancos);
    filas()
      .then((lista) => {
        amostras.push({
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
