import type { Broker, Consumption, MessageHandler, RetryPolicy } from '@hub/broker';
import type { DeliveryTopology } from '@hub/contracts';
import type { Logger } from '@hub/log';
import { type Destinos, prefetchDoDestino, retido } from './destinos';
import type { Isolada } from './isolamento.repository';

interface Consumo {
  consumo: Promise<Consumption | undefined>;
  prefetch: number;
}

export interface ConsumosOptions {
  broker: Pick<Broker, 'consume'>;
  topologia: DeliveryTopology;
  destinos: Pick<Destinos, 'regras'>;
  logger: Logger;
  /** The handler of jobs taken from a destination's queue. */
  processar: MessageHandler;
  /** The consumer's retries (as the shared queue's); a failed job comes back through the shared queue. */
  retry: RetryPolicy;
  isUnavailable: (error: unknown) => boolean;
  /** The isolated destination of an origin as last read (gone: its queue is not consumed). */
  isolada: (origem: string) => Isolada | undefined;
  /** Stopping: nothing changes any more (the broker's close cancels every consumer). */
  parado: () => boolean;
}

/**
 * This process's consumers of the isolated destinations' queues: each with its destination's share
 * as prefetch, or none while the destination is held or on its way back.
 */
export class ConsumosDosDestinos {
  private readonly consumos = new Map<string, Consumo>();
  /** The adjustment of each queue's consumer under way, by queue id: one at a time, in order. */
  private readonly ajustes = new Map<string, Promise<void>>();

  constructor(private readonly o: ConsumosOptions) {}

  /**
   * Consumes the destination's queue with its share as prefetch, or not at all (held, or on its way
   * back). The adjustments of one queue run one after the other (a cancel waits for the jobs under
   * way, and two adjustments interleaved would leave a consumer nobody cancels); each reads the
   * rules when its turn comes. Stopping, it changes nothing: the broker's close cancels them all.
   */
  ajustar(isolada: Isolada): Promise<void> {
    return this.emOrdem(isolada.id, () => this.ajustarAgora(isolada.origem, isolada.id));
  }

  /** Stops consuming the queues of destinations no longer isolated (`isolada`: whether a queue id still is). */
  async esquecerOutras(isolada: (id: string) => boolean): Promise<void> {
    for (const id of this.consumos.keys()) if (!isolada(id)) await this.emOrdem(id, () => this.naoConsumir(id));
  }

  /** Runs `passo` on a queue's consumer after the steps asked for before it; it never fails. */
  private emOrdem(id: string, passo: () => Promise<void>): Promise<void> {
    const ajuste = (this.ajustes.get(id) ?? Promise.resolve())
      .then(passo)
      .catch((error) =>
        this.o.logger.warn(
          { err: error, destino_id: id },
          'destination queue consumer not adjusted; trying again at the next pass',
        ),
      )
      .finally(() => {
        if (this.ajustes.get(id) === ajuste) this.ajustes.delete(id);
      });
    this.ajustes.set(id, ajuste);
    return ajuste;
  }

  private async ajustarAgora(origem: string, id: string): Promise<void> {
    if (this.o.parado()) return;
    // The row as last read when its turn comes: gone (its queue removed), nothing consumes it.
    const isolada = this.o.isolada(origem);
    if (isolada?.id !== id) return this.naoConsumir(id);
    const regras = this.o.destinos.regras(isolada.origem);
    const consumir =
      !retido(regras) && (isolada.estado === 'isolada' || (isolada.estado === 'saindo' && !isolada.parada));
    const atual = this.consumos.get(isolada.id);
    if (!consumir) {
      if (atual) await this.naoConsumir(isolada.id);
      return;
    }
    const prefetch = prefetchDoDestino(regras);
    if (atual?.prefetch === prefetch) return;
    // A prefetch is fixed for a consumer's life: a new share means a new consumer.
    if (atual) await this.naoConsumir(isolada.id);
    const fila = this.o.topologia.filaDoDestino(isolada.id);
    const consumo = this.o.broker
      .consume(fila, this.o.processar, {
        prefetch,
        retry: this.o.retry,
        isUnavailable: this.o.isUnavailable,
        retryQueue: this.o.topologia.filaDeEntregas,
      })
      .catch((error) => {
        // Its queue missing while the row says isolated (deleted by hand): declared again at the next pass.
        this.o.logger.warn({ err: error, fila }, 'destination queue not consumed; trying again at the next pass');
        if (this.consumos.get(isolada.id)?.consumo === consumo) this.consumos.delete(isolada.id);
        return undefined;
      });
    this.consumos.set(isolada.id, { consumo, prefetch });
    await consumo;
  }

  private async naoConsumir(id: string): Promise<void> {
    const atual = this.consumos.get(id);
    if (!atual) return;
    this.consumos.delete(id);
    await (await atual.consumo)?.cancel();
  }
}
