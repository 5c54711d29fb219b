import { periodicJob } from '@hub/jobs';
import type { Logger } from '@hub/log';
import type { MotorDaReproducao } from '../features/reproducao/motor';
import type { LoteRepository } from '../features/reproducao/lote.repository';

export interface ReproducaoJobOptions {
  motor: MotorDaReproducao;
  repo: Pick<LoteRepository, 'abertas'>;
  logger: Logger;
  /** How often it looks for open replays without being woken (one a stopped instance left, one waiting for its destination). */
  intervaloMs: number;
  /** Pause between two rounds of batches (HUB_REPRODUCAO_PAUSA): each open replay takes at most one batch per round. */
  pausaMs: number;
  /** Told after a batch moved deliveries out of fila_de_erro: their messages must leave the error queue. */
  aoSairDaFilaDeErro: () => void;
}

/** Replays taken per round; more wait for the next rounds, oldest first. */
const POR_RODADA = 100;

/**
 * Runs the replays in rounds: each open replay (oldest first) gets one batch per round, so a large
 * replay never holds back a small one, and a round is followed by a pause, so a replay goes at most
 * one batch per pause. A replay whose last batch is still mostly in the queue waits (its destination's
 * pace); when no replay did anything, the run ends until the next tick or wake().
 */
export function reproducaoJob(options: ReproducaoJobOptions) {
  const { motor, repo, logger } = options;

  async function rodada(): Promise<boolean> {
    let trabalhou = false;
    let saiuDaFilaDeErro = false;
    for (const id of await repo.abertas(POR_RODADA)) {
      if (job.stopped) break;
      let passo: Awaited<ReturnType<MotorDaReproducao>>;
      try {
        passo = await motor(id);
      } catch (error) {
        // One replay that cannot take its batch (its transaction rolled back) must not hold up the
        // others: every later replay of the round would wait behind it forever.
        logger.error({ err: error, reproducao: id }, 'replay batch failed');
        continue;
      }
      if (passo.feito === 'lote') {
        trabalhou = true;
        saiuDaFilaDeErro ||= passo.saiuDaFilaDeErro;
      } else if (passo.feito === 'encerrada') {
        trabalhou = true;
        logger.info({ reproducao: id, situacao: passo.situacao }, 'replay ended');
      }
    }
    if (saiuDaFilaDeErro) options.aoSairDaFilaDeErro();
    return trabalhou;
  }

  async function rodar(): Promise<void> {
    while (!job.stopped && (await rodada())) await new Promise((resolve) => setTimeout(resolve, options.pausaMs));
  }

  // wake() runs now (or right after the run under way); stop() ends after the batch under way.
  const job = periodicJob({ name: 'replay', logger, everyMs: options.intervaloMs, run: rodar });
  return job;
}
export type ReproducaoJob = ReturnType<typeof reproducaoJob>;
