import type { Broker } from '@hub/broker';
import { type DeliveryTopology, trabalhoDeEntrega } from '@hub/contracts';
import { periodicJob } from '@hub/jobs';
import type { Logger } from '@hub/log';
import { type EntregasRepository, type Perdida, trabalhoDaLinha } from '../features/entregas/entregas.repository';
import type { Metricas } from '../metricas';

export interface VarreduraOpcoes {
  repo: EntregasRepository;
  broker: Broker;
  topologia: DeliveryTopology;
  logger: Logger;
  metricas: Metricas;
  intervaloMs: number;
  /**
   * A delivery this far past the latest moment its job could come back (the end of its delay step,
   * or of its claim's lease) has lost its job.
   */
  idadeMs: number;
  /** How long after a destination is resumed (or its circuit closed) its jobs may still come back from the pause's delay queue. */
  retomadaMs: number;
  lote?: number;
}

/**
 * The sweeper: finds deliveries whose job was lost (a job deleted from a queue, a crash between a
 * commit and a publish) and publishes their job again, rebuilt from the database (mandatory,
 * confirmed). Several workers sweep safely: rows are taken with SKIP LOCKED and stamped in the same
 * statement. A job that cannot be published is found again on a later pass. It also passes the turns
 * of ordered entities that a dead process left on a final delivery (docs/decisions/ordered-delivery-per-entity.md), and publishes the jobs of the deliveries that releases.
 */
export function varreduraJob(o: VarreduraOpcoes) {
  const lote = o.lote ?? 200;
  const publicarDeNovo = (p: Perdida) =>
    o.broker.publish(
      o.topologia.entregas,
      trabalhoDeEntrega.routingKey,
      Buffer.from(JSON.stringify(trabalhoDaLinha(p))),
      {
        messageId: p.entrega_id,
        mandatory: true,
      },
    );
  return periodicJob({
    name: 'sweeper',
    logger: o.logger,
    pauseMs: o.intervaloMs,
    /** One pass: the number of jobs enqueued again. */
    async run(job): Promise<number> {
      let total = 0;
      for (;;) {
        const perdidas = await o.repo.recolherPerdidas(o.idadeMs, o.retomadaMs, lote);
        for (const p of perdidas) await publicarDeNovo(p);
        total += perdidas.length;
        o.metricas.recuperadas.inc(perdidas.length);
        if (perdidas.length < lote || job.stopped) break;
      }
      // Ordered delivery: turns left on a final delivery (its process died before passing them).
      for (;;) {
        const liberadas = await o.repo.recolherVezesPerdidas(lote);
        for (const p of liberadas) await publicarDeNovo(p);
        total += liberadas.length;
        o.metricas.recuperadas.inc(liberadas.length);
        if (liberadas.length < lote || job.stopped) break;
      }
      if (total > 0)
        o.logger.warn({ quantidade: total }, 'sweeper enqueued jobs again for deliveries whose job was lost');
      return total;
    },
  });
}
export type VarreduraJob = ReturnType<typeof varreduraJob>;
