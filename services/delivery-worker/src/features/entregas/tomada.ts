import { type ConsumeMessage, decode } from '@hub/broker';
import { type TrabalhoDeEntrega, trabalhoDeEntrega } from '@hub/contracts';
import type { EtapaDeDesfecho } from './desfecho';
import { type Desfecho, TrabalhoDevolvido } from './erros';
import type { Recursos } from './recursos';
import type { EtapaDeRetencao } from './retencao';
import type { Parada, TentativaDeEntrega } from './tentativa';
import { doTrabalho, type Posse } from './trabalho';

export interface VizinhosDaTomada {
  parada: Parada;
  retencao: Pick<EtapaDeRetencao, 'doCompartilhado'>;
  tentativa: TentativaDeEntrega;
  desfecho: Pick<EtapaDeDesfecho, 'ilegivel' | 'depoisDaFalha'>;
}

/**
 * Take (architecture §5, steps 2–3): a job read, sent on when its destination has a queue of its
 * own, then attempted one at a time per delivery in this process; what fails after its claim goes
 * to the failure stage, which says what the consumer sees.
 */
export class EtapaDeTomada {
  /** Delivery ids with a job under way in this process, and that job's work. */
  private readonly emCurso = new Map<string, Promise<unknown>>();

  private readonly recursos: Recursos;
  private readonly vizinhos: VizinhosDaTomada;

  constructor({ recursos, ...vizinhos }: { recursos: Recursos } & VizinhosDaTomada) {
    this.recursos = recursos;
    this.vizinhos = vizinhos;
  }

  /** A second job of a delivery under way here: after the first, it claims as usual. */
  private async depoisDoAnterior(
    primeiro: Promise<unknown>,
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    posse: Posse,
  ): Promise<Desfecho> {
    await primeiro.catch(() => undefined);
    if (this.vizinhos.parada.parando) throw new TrabalhoDevolvido('parando');
    return this.vizinhos.tentativa.tentar(trabalho, message, posse);
  }

  /**
   * A job taken from the shared work queue (`doDestino` false) or from an isolated destination's
   * own queue: resolves when it may be acked.
   */
  async processar(message: ConsumeMessage, doDestino: boolean): Promise<Desfecho | undefined> {
    const { metricas, logger } = this.recursos;
    const { parada, retencao, tentativa, desfecho } = this.vizinhos;
    const { emCurso } = this;
    let trabalho: TrabalhoDeEntrega;
    try {
      trabalho = decode(trabalhoDeEntrega, message);
    } catch (error) {
      await desfecho.ilegivel(message, error);
      return 'envenenado';
    }
    if (parada.parando) throw new TrabalhoDevolvido('parando');
    if (!doDestino && (await retencao.doCompartilhado(trabalho, message))) return 'encaminhado';
    // A second job of a delivery under way here waits for the first, then claims as usual (dropped
    // if the first finished it). Never acked at once: after a broker connection loss the copy is
    // the redelivery of the first job, whose own ack (or retry publish) is lost with the old channel.
    const anterior = emCurso.get(trabalho.entrega_id);
    if (anterior) {
      metricas.trabalhos.inc({ desfecho: 'duplicado' });
      logger.debug(doTrabalho(trabalho), 'a job of this delivery is under way here: waiting for it');
    }
    const posse: Posse = { doDestino };
    // Every log line of the job carries the request id of the publication that caused it (doTrabalho).
    const atual = anterior
      ? this.depoisDoAnterior(anterior, trabalho, message, posse)
      : tentativa.tentar(trabalho, message, posse);
    emCurso.set(trabalho.entrega_id, atual);
    try {
      return await atual;
    } catch (error) {
      throw await desfecho.depoisDaFalha(trabalho, message, posse, error);
    } finally {
      if (emCurso.get(trabalho.entrega_id) === atual) emCurso.delete(trabalho.entrega_id);
    }
  }
}
