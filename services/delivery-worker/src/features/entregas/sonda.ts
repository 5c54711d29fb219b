import type { ConsumeMessage } from '@hub/broker';
import type { TrabalhoDeEntrega } from '@hub/contracts';
import { destinoFora } from '../destinos/circuito';
import { type Destinos, retido } from '../destinos/destinos';
import type { EtapaDeRetencao } from './retencao';
import type { ResultadoDoEnvio } from './remetente';
import type { Posse } from './trabalho';

export interface VizinhosDaSonda {
  /** The destinations' rules and circuits (the rows of destino, this process's share). */
  destinos: Pick<Destinos, 'regras' | 'anotar' | 'sondar' | 'concluirSonda' | 'devolverSonda'>;
  retencao: Pick<EtapaDeRetencao, 'reter' | 'esperarPausa'>;
}

/**
 * The circuit's probe (architecture §5, Destinations): at its turn a job looks at its destination
 * again; while the circuit is half-open it asks for the probe, and the attempt it then makes is the
 * probe, whose result closes the circuit or opens it again. Every attempt's result is counted in
 * its origin's figures and window (the window opens the circuit: `Destinos`).
 */
export class EtapaDaSonda {
  constructor(private readonly vizinhos: VizinhosDaSonda) {}

  /**
   * The job has its turn: it goes on (`segue`), or it is held after all (paused, or its circuit
   * opened, while it waited). Half-open (the open period is over, or the probe under way lost its
   * lease): this job asks for the probe; a job that does not get it (another job, here or in
   * another worker, has it) goes back to its destination's queue, whose consumers stop while the
   * probe is under way. When the rules still let it ask (the database did not answer, or this
   * process is asking for the probe for another job) it waits in the delay queue instead, so that
   * it does not come straight back to ask again. A statement that found the circuit closed (by
   * hand, or by a probe elsewhere, since this process last read it) lets the job go now.
   */
  async naVez(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    origem: string,
    token: string,
    posse: Posse,
  ): Promise<'segue' | 'encaminhado' | 'pausado' | 'circuito'> {
    const { destinos, retencao } = this.vizinhos;
    const agora = destinos.regras(origem);
    if (retido(agora)) return retencao.reter(trabalho, message, origem, token, agora);
    if (agora.circuito === 'fechado') return 'segue';
    const sonda = await destinos.sondar(origem);
    if (sonda) {
      posse.sonda = { origem, token: sonda };
      return 'segue';
    }
    const depois = destinos.regras(origem);
    if (retido(depois)) return retencao.reter(trabalho, message, origem, token, depois);
    if (depois.circuito !== 'fechado') return retencao.esperarPausa(message, token, depois);
    return 'segue';
  }

  /**
   * One attempt's result: its figures (by success) and its circuit's window (by `destinoFora`),
   * unless it was the probe, whose result goes to `concluirSonda` instead.
   */
  async depoisDoEnvio(origem: string, resultado: ResultadoDoEnvio, posse: Posse): Promise<void> {
    const { destinos } = this.vizinhos;
    const sonda = posse.sonda;
    const saudavel = !destinoFora(resultado);
    destinos.anotar(
      origem,
      resultado.sucesso,
      resultado.duracaoMs,
      resultado.iniciadaEm,
      sonda !== undefined,
      saudavel,
    );
    if (!sonda) return;
    posse.sonda = undefined;
    const desfecho = resultado.statusHttp === null ? (resultado.erro ?? 'no answer') : `HTTP ${resultado.statusHttp}`;
    await destinos.concluirSonda(origem, sonda.token, saudavel, desfecho);
  }

  /** A probe taken and not attempted: given back, so another job takes it at once. */
  async devolver(posse: Posse): Promise<void> {
    if (!posse.sonda) return;
    await this.vizinhos.destinos.devolverSonda(posse.sonda.origem, posse.sonda.token);
    posse.sonda = undefined;
  }
}
