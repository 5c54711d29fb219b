import { type ConsumeMessage, UnroutableError } from '@hub/broker';
import type { TrabalhoDeEntrega } from '@hub/contracts';
import type { Regras } from '../destinos/destinos';
import type { Isolamento } from '../destinos/isolamento';
import { propriedadesDoTrabalho } from '../destinos/propriedades';
import type { DesfechoDaEspera } from './erros';
import type { EtapaDeReivindicacao } from './reivindicacao';
import type { Recursos } from './recursos';
import { CABECALHO_REIVINDICACAO, levarReivindicacao, origemDoTrabalho, paraAEscada, tokenDe } from './trabalho';

/** The delay step a job of a paused destination waits in before it looks again: the longest up to a minute. */
export function passoDaPausa(passosMs: readonly number[]): number {
  const ate1Minuto = passosMs.filter((p) => p <= 60_000);
  return ate1Minuto.length > 0 ? Math.max(...ate1Minuto) : Math.min(...passosMs);
}

export interface VizinhosDaRetencao {
  /** The destinations with a queue of their own (architecture §5, fair scheduling). */
  isolamento: Pick<Isolamento, 'rotaDe' | 'reter' | 'anotarAdiamento' | 'anotarTrabalho'>;
  reivindicacao: Pick<EtapaDeReivindicacao, 'devolver'>;
}

/**
 * Hold and forward (architecture §5, fair scheduling): a job that is not to be attempted here now
 * leaves, untouched, for where it waits best: its isolated destination's own queue, or a delay
 * queue when that cannot be had. No attempt is made or counted.
 */
export class EtapaDeRetencao {
  private readonly recursos: Recursos;
  private readonly vizinhos: VizinhosDaRetencao;

  constructor({ recursos, ...vizinhos }: { recursos: Recursos } & VizinhosDaRetencao) {
    this.recursos = recursos;
    this.vizinhos = vizinhos;
  }

  /**
   * A job taken from the shared work queue: sent on, untouched, when its destination has a queue of
   * its own (it was published before the isolation was known, or came back from a delay queue);
   * true when it left. Otherwise it counts toward its destination's share of the queue.
   */
  async doCompartilhado(trabalho: TrabalhoDeEntrega, message: ConsumeMessage): Promise<boolean> {
    const { isolamento } = this.vizinhos;
    const origem = origemDoTrabalho(trabalho.url_de_destino);
    const rota = isolamento.rotaDe(origem);
    if (rota && (await this.encaminhar(message, rota, trabalho.entrega_id))) return true;
    isolamento.anotarTrabalho(origem);
    return false;
  }

  /**
   * A held destination (paused, circuit open): the job goes to the destination's own queue, isolating
   * it now if need be, where it sits still, unconsumed, until the destination is released; when it
   * cannot (its queue is being removed, the database did not answer) it takes the pause's way.
   */
  async reter(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    origem: string,
    token: string | null,
    regras: Regras,
  ): Promise<'encaminhado' | 'pausado' | 'circuito'> {
    const rota = await this.vizinhos.isolamento.reter(origem);
    if (rota) {
      if (token) levarReivindicacao(message, token);
      if (await this.encaminhar(message, rota, trabalho.entrega_id)) return 'encaminhado';
    }
    return this.esperarPausa(message, token, regras);
  }

  /**
   * No turn at the destination within the wait. Its destination got a queue of its own while the
   * job waited (or before its wait ran out): it waits there, its claim given back, instead of
   * cycling through a delay queue to be forwarded from the shared queue after. Otherwise deferred.
   */
  async semVez(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    origem: string,
    token: string,
  ): Promise<'encaminhado' | 'adiado'> {
    const rota = this.vizinhos.isolamento.rotaDe(origem);
    if (rota) {
      levarReivindicacao(message, token);
      if (await this.encaminhar(message, rota, trabalho.entrega_id)) return 'encaminhado';
    }
    return this.adiar(message, token, origem);
  }

  /**
   * The job, as it came (message id, body, its own headers), into its destination's queue by
   * `rota`, confirmed; the caller acks the original after. A job holding a claim gives it back first
   * (one batched statement; jobs without one, nearly all, touch no database): behind a backlog its
   * lease would end and the sweeper would take it for lost. False when nothing is bound to the
   * route any more (the queue is being removed): the job is not sent and stays where it is.
   */
  async encaminhar(message: ConsumeMessage, rota: string, entregaId: string): Promise<boolean> {
    const { broker, topologia, metricas } = this.recursos;
    const token = tokenDe(message);
    if (token) await this.vizinhos.reivindicacao.devolver(entregaId, token);
    try {
      await broker.publish(topologia.entregas, rota, message.content, {
        ...propriedadesDoTrabalho(message.properties, [CABECALHO_REIVINDICACAO]),
        messageId: entregaId,
        mandatory: true,
      });
    } catch (error) {
      if (error instanceof UnroutableError) return false;
      throw error;
    }
    metricas.trabalhos.inc({ desfecho: 'encaminhado' });
    return true;
  }

  /**
   * A held destination (`retido`: paused, or its circuit open): the job waits in a delay queue and
   * looks again, the delivery untouched (no attempt, nothing counted); the sweeper leaves its
   * deliveries alone meanwhile.
   */
  esperarPausa(message: ConsumeMessage, token: string | null, regras?: Regras): Promise<'pausado' | 'circuito'> {
    const desfecho = regras && !regras.pausado ? 'circuito' : 'pausado';
    return this.esperarNaFila(message, passoDaPausa(this.recursos.config.passosMs), desfecho, token);
  }

  /** The destination stayed at its limit for the whole wait: the job waits in the shortest delay queue instead. */
  private async adiar(message: ConsumeMessage, token: string, origem: string): Promise<'adiado'> {
    await this.esperarNaFila(message, Math.min(...this.recursos.config.passosMs), 'adiado', token);
    this.recursos.metricas.adiadas.inc();
    this.vizinhos.isolamento.anotarAdiamento(origem);
    return 'adiado';
  }

  /**
   * The job, unchanged, into the delay queue of `passoMs`; it comes back to be looked at again,
   * carrying the claim it holds (no attempt made, nothing counted).
   */
  private async esperarNaFila<D extends DesfechoDaEspera>(
    message: ConsumeMessage,
    passoMs: number,
    desfecho: D,
    token: string | null,
  ): Promise<D> {
    const extra = token ? { headers: { [CABECALHO_REIVINDICACAO]: token } } : {};
    await paraAEscada(this.recursos, passoMs, message, extra);
    this.recursos.metricas.trabalhos.inc({ desfecho });
    return desfecho;
  }
}
