import type { Broker } from '@hub/broker';
import { type DeliveryTopology, destinationRoutingKey, trabalhoDeEntrega } from '@hub/contracts';
import type { Logger } from '@hub/log';
import type { Metricas } from '../../metricas';
import type { Relogio } from '../../relogio';
import type { Isolada, IsolamentoRepository } from './isolamento.repository';
import { propriedadesDoTrabalho } from './propriedades';

export interface RetornoOptions {
  repo: Pick<IsolamentoRepository, 'sair' | 'tomarRemocao' | 'concluirRemocao'>;
  broker: Pick<Broker, 'checkQueue' | 'withChannel' | 'publish' | 'forgetQueue'>;
  topologia: DeliveryTopology;
  logger: Logger;
  metricas: Pick<Metricas, 'isolamentos'>;
  relogio: Pick<Relogio, 'agora'>;
  /** How long an isolated destination, not held, keeps its queue empty before it starts going back. */
  quietudeMs: number;
  /** Told as soon as a destination's row says shared again (its queue is gone). */
  aoRemover: (isolada: Isolada) => void;
}

/**
 * A destination's way back to the shared queue (architecture §5, "Giving it back"): `saindo` once
 * its queue stayed empty for the quiet period, then one worker removes the queue.
 */
export class RetornoAoCompartilhado {
  private readonly vaziaDesde = new Map<string, number>();

  constructor(private readonly o: RetornoOptions) {}

  /** The destination is held, backlogged or its queue not empty: its quiet period starts again. */
  ocupada(isolada: Isolada): void {
    this.vaziaDesde.delete(isolada.id);
  }

  /** Not held and its queue empty (now) for the quiet period: it starts going back to the shared queue. */
  async talvezSair(isolada: Isolada): Promise<void> {
    const fila = this.o.topologia.filaDoDestino(isolada.id);
    const desde = this.vaziaDesde.get(isolada.id) ?? this.o.relogio.agora();
    this.vaziaDesde.set(isolada.id, desde);
    if (!isolada.assentada || this.o.relogio.agora() - desde < this.o.quietudeMs) return;
    const mudadas = await this.o.repo.sair(isolada.id);
    this.vaziaDesde.delete(isolada.id);
    if (mudadas === 0) return;
    isolada.estado = 'saindo';
    this.o.metricas.isolamentos.inc({ mudanca: 'saindo' });
    this.o.logger.info(
      { origem: isolada.origem, destino_id: isolada.id, fila },
      'destination going back to the shared queue: nothing new is sent to its own queue',
    );
  }

  /**
   * Removes the queue of a destination on its way back, once no worker consumes it: one worker takes
   * the removal (the row `removendo`), unbinds the queue, moves what is left in it to the shared
   * queue (each job published with a confirm, then acked), deletes it, and the row says shared.
   * A removal that stalled (its worker died) is taken over after the margin.
   */
  async remover(isolada: Isolada): Promise<void> {
    const { topologia, broker, logger, repo } = this.o;
    const fila = topologia.filaDoDestino(isolada.id);
    const consumidores = await broker
      .checkQueue(fila)
      .then((q) => q.consumerCount)
      .catch((error) => {
        if ((error as { code?: number }).code === 404) return 0;
        throw error;
      });
    if (consumidores > 0) {
      logger.debug({ fila, consumidores }, 'destination queue still consumed: removed later');
      return;
    }
    if ((await repo.tomarRemocao(isolada.id)) === 0) return;
    // Unbound first: from now on a job sent there is returned to its publisher, who uses the shared
    // queue. (Unbinding a queue that is gone closes the channel with a 404: nothing to unbind.)
    await broker
      .withChannel((ch) => ch.unbindQueue(fila, topologia.entregas, destinationRoutingKey(isolada.id)))
      .catch((error) => {
        if ((error as { code?: number }).code !== 404) throw error;
      });
    const movidas = await this.esvaziar(fila);
    await broker.withChannel((ch) => ch.deleteQueue(fila));
    broker.forgetQueue(fila);
    await repo.concluirRemocao(isolada.id);
    this.o.aoRemover(isolada);
    this.o.metricas.isolamentos.inc({ mudanca: 'removida' });
    logger.info(
      { origem: isolada.origem, destino_id: isolada.id, fila, movidas },
      'destination back in the shared queue: its own queue removed',
    );
  }

  /** Moves every job left in a queue to the shared work queue (confirmed, then acked); gives how many. */
  private esvaziar(fila: string): Promise<number> {
    const { broker, topologia } = this.o;
    return broker.withChannel(async (ch) => {
      let n = 0;
      for (;;) {
        const mensagem = await ch.get(fila, { noAck: false }).catch((error) => {
          if ((error as { code?: number }).code === 404) return false as const;
          throw error;
        });
        if (!mensagem) return n;
        await broker.publish(topologia.entregas, trabalhoDeEntrega.routingKey, mensagem.content, {
          ...propriedadesDoTrabalho(mensagem.properties),
          mandatory: true,
        });
        ch.ack(mensagem);
        n += 1;
      }
    });
  }
}
