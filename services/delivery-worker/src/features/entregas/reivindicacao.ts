import { randomUUID } from 'node:crypto';
import type { TrabalhoDeEntrega } from '@hub/contracts';
import { Lote } from '../../lote';
import type { Pedido, Reivindicada } from './linhas';
import { medida, type Recursos } from './recursos';
import { doTrabalho } from './trabalho';
import type { PassagemDaVez } from './vez';

/** What a job's claim of its delivery gave. */
export type Reivindicacao =
  /** claimed: the attempt goes on under `token` */
  | { tipo: 'reivindicada'; linha: Reivindicada; token: string }
  /** final, unknown, not due, or held by another job's live claim (a copy): the job is dropped */
  | { tipo: 'descartada' }
  /** its subscription is off or deleted: cancelled here, for good */
  | { tipo: 'cancelada'; linha: Reivindicada }
  /** its claims kept dying with their worker: fila_de_erro already, its job for the error queue */
  | { tipo: 'envenenada'; linha: Reivindicada };

/**
 * Take and claim (architecture §5, step 3): the claims of the jobs arriving together go in one
 * statement, one under way at a time (bench/floor): the jobs arriving meanwhile wait for the next
 * one, so under load each statement carries twice the rows of two at once, and the worker (and
 * PostgreSQL) pay half the round trips per delivery (docs/decisions/delivery-worker-cpu.md). A
 * delivery made final by its claim (cancelled, poison) passes its entity's turn.
 */
export class EtapaDeReivindicacao {
  private readonly reivindicacoes: Lote<Pedido, Reivindicada | undefined>;
  /** Claims given back (a job leaving for its destination's queue), batched like the claims. */
  private readonly liberacoes: Lote<{ id: string; token: string }, undefined>;

  private readonly recursos: Recursos;
  private readonly vizinhos: { vez: Pick<PassagemDaVez, 'passar'> };

  constructor({ recursos, ...vizinhos }: { recursos: Recursos; vez: Pick<PassagemDaVez, 'passar'> }) {
    this.recursos = recursos;
    this.vizinhos = vizinhos;
    const { repo } = recursos;
    this.reivindicacoes = new Lote(
      async (pedidos) => {
        // One claim per delivery in a statement (jobs of one delivery are serialised here anyway).
        const unicos = new Map(pedidos.map((p) => [p.id, p]));
        const linhas = await repo.reivindicar([...unicos.values()]);
        const porId = new Map(linhas.map((l) => [l.id, l]));
        return pedidos.map((p) => (unicos.get(p.id) === p ? porId.get(p.id) : undefined));
      },
      { paralelos: 1, aoEsvaziar: medida(recursos, 'reivindicacao') },
    );
    this.liberacoes = new Lote(
      async (posses) => {
        await repo.liberar(posses);
        return posses.map(() => undefined);
      },
      { aoEsvaziar: medida(recursos, 'liberacao') },
    );
  }

  /** Claims the job's delivery under a new token, continuing the claim `anterior` its job carries. */
  async reivindicar(trabalho: TrabalhoDeEntrega, anterior: string | null): Promise<Reivindicacao> {
    const { metricas, logger } = this.recursos;
    const token = randomUUID();
    const linha = await this.reivindicacoes.add({ id: trabalho.entrega_id, token, anterior });
    if (!linha) {
      metricas.trabalhos.inc({ desfecho: 'descartado' });
      logger.debug(doTrabalho(trabalho), 'delivery final, unknown, not due or held by another job: job dropped');
      return { tipo: 'descartada' };
    }
    // Cancelled (subscription off) or poison: final, so the entity's next delivery may go.
    if (linha.situacao !== 'em_andamento') await this.vizinhos.vez.passar([linha]);
    if (linha.situacao === 'cancelada') {
      metricas.trabalhos.inc({ desfecho: 'cancelado' });
      metricas.situacoes.inc({ situacao: 'cancelada' });
      logger.info(doTrabalho(trabalho), 'subscription off: delivery cancelled');
      return { tipo: 'cancelada', linha };
    }
    if (linha.situacao === 'fila_de_erro') return { tipo: 'envenenada', linha };
    return { tipo: 'reivindicada', linha, token };
  }

  /** Gives a claim back in the next batch (a job leaving for its destination's queue). */
  devolver(id: string, token: string): Promise<undefined> {
    return this.liberacoes.add({ id, token });
  }

  /** Gives a claim back now (the worker is stopping); a failure leaves it to its lease. */
  async liberar(trabalho: TrabalhoDeEntrega, token: string): Promise<void> {
    await this.recursos.repo
      .liberar([{ id: trabalho.entrega_id, token }])
      .catch((e) =>
        this.recursos.logger.warn({ ...doTrabalho(trabalho), err: e }, 'claim not released; its lease ends it'),
      );
  }
}
