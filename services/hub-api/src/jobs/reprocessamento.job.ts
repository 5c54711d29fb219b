import { periodicJob } from '@hub/jobs';
import type { Logger } from '@hub/log';
import { type Db, transacao } from '../db';
import { iniciarNovoCiclo } from '../features/entregas/ciclo';
import type { ReprocessamentoRepository } from '../features/reprocessamento/reprocessamento.repository';

export interface ReprocessamentoJobOptions {
  db: Db;
  repo: ReprocessamentoRepository;
  logger: Logger;
  /** Deliveries per batch, each batch one transaction (HUB_REPROCESSAMENTO_LOTE). */
  lote: number;
  /** How often it looks for requests without being woken (a request left by a stopped instance). */
  intervaloMs: number;
  /** A pause between batches, so a large request does not hog the database (HUB_REPROCESSAMENTO_PAUSA). */
  pausaMs?: number;
  /** Told after a request concluded: its deliveries' messages must leave the error queue. */
  aoConcluir: (solicitacaoId: string) => void;
  relogio?: () => Date;
}

type Passo = { trabalhou: false } | { trabalhou: true; concluida?: string };

/**
 * Runs reprocessing requests in batches. Each batch is one transaction: it claims the oldest open
 * request (FOR UPDATE SKIP LOCKED, so two hub-api never share one), locks the next deliveries after
 * the request's cursor, starts a new cycle for those whose subscription still receives (their jobs
 * into the outbox), and moves the cursor and the counters. Nothing lives only in memory: a hub-api
 * stopped half-way leaves the request em_andamento with its cursor, and any instance goes on from
 * there; a delivery already moved has left fila_de_erro and is never taken twice.
 */
export function reprocessamentoJob(options: ReprocessamentoJobOptions) {
  const { db, repo, logger, lote } = options;
  const relogio = options.relogio ?? (() => new Date());

  const passo = (): Promise<Passo> =>
    transacao(db, async (tx) => {
      const s = await repo.reivindicar(tx);
      if (!s) return { trabalhou: false };
      const agora = relogio();
      const candidatas = await repo.candidatas(s, lote, tx);
      if (candidatas.length === 0) {
        await repo.avancar(
          s.id,
          { situacao: 'concluida', atualizadaEm: agora, concluidaEm: agora, iniciadaEm: s.iniciadaEm ?? agora },
          tx,
        );
        return { trabalhou: true, concluida: s.id };
      }
      const ativas = candidatas.filter((c) => c.assinatura_ativa).map((c) => c.id);
      await iniciarNovoCiclo(tx, ativas, agora, null);
      const ultima = candidatas[candidatas.length - 1]!;
      await repo.avancar(
        s.id,
        {
          situacao: 'em_andamento',
          iniciadaEm: s.iniciadaEm ?? agora,
          atualizadaEm: agora,
          reprocessadas: { increment: ativas.length },
          ignoradas: { increment: candidatas.length - ativas.length },
          cursorCriadaEm: ultima.criada_em,
          cursorId: ultima.id,
        },
        tx,
      );
      return { trabalhou: true };
    });

  async function rodar(): Promise<void> {
    while (!job.stopped) {
      const feito = await passo();
      if (!feito.trabalhou) return;
      if (feito.concluida) {
        logger.info({ solicitacao: feito.concluida }, 'reprocessing request concluded');
        options.aoConcluir(feito.concluida);
      } else if (options.pausaMs) await new Promise((resolve) => setTimeout(resolve, options.pausaMs));
    }
  }

  // wake() runs the open requests now (or right after the run under way); stop() ends after the
  // batch under way (committed or rolled back whole) and waits for it.
  const job = periodicJob({ name: 'reprocessing', logger, everyMs: options.intervaloMs, run: rodar });
  return job;
}
export type ReprocessamentoJob = ReturnType<typeof reprocessamentoJob>;
