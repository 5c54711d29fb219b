import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Draft } from './esquemas';

/**
 * A schema being registered is compiled first in a worker thread of its own, with a time limit
 * (HUB_SCHEMA_COMPILE_LIMIT): one that takes longer (10,000 patternProperties took 21 s) is refused
 * without the event loop ever compiling it, so publications go on meanwhile. Only a schema that
 * compiled within the limit is compiled again on the event loop (to keep its validator), so the hub
 * is held at most about the limit once per schema and process, never for as long as a schema likes.
 */
export type ProvaDaCompilacao = { dentroDoLimite: true; ms: number } | { dentroDoLimite: false; limiteMs: number };

const ARQUIVO = path.join(__dirname, 'compilacao.worker.cjs');

export function compilarComLimite(
  esquema: Record<string, unknown>,
  draft: Draft,
  limiteMs: number,
): Promise<ProvaDaCompilacao> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(ARQUIVO, { resourceLimits: { maxOldGenerationSizeMb: 512 } });
    let terminou = false;
    let relogio: NodeJS.Timeout | undefined;
    const acabar = (fazer: () => void) => {
      if (terminou) return;
      terminou = true;
      clearTimeout(relogio);
      void worker.terminate();
      fazer();
    };
    // The limit counts the compilation only: the thread's start-up (loading ajv, slower on a busy
    // machine or with several registrations at once) is not held against the schema.
    worker.on('message', (r: { pronto?: true; ms: number }) => {
      if (r.pronto) {
        relogio = setTimeout(() => acabar(() => resolve({ dentroDoLimite: false, limiteMs })), limiteMs);
        worker.postMessage({ esquema, draft });
        return;
      }
      acabar(() => resolve({ dentroDoLimite: true, ms: r.ms }));
    });
    worker.once('error', (error) => acabar(() => reject(error)));
    worker.once('exit', (code) => acabar(() => reject(new Error(`the compilation worker exited (${code})`))));
  });
}
