import type { ConsumeMessage } from '@hub/broker';
import type { TrabalhoDeEntrega } from '@hub/contracts';
import { TRACEPARENT, type Trecho } from '@hub/tracing';
import { type Destinos, retido } from '../destinos/destinos';
import type { EtapaDeDesfecho } from './desfecho';
import type { EtapaDeEnvio } from './envio';
import type { Reivindicada } from './linhas';
import { type Desfecho, TrabalhoDevolvido } from './erros';
import type { LimitePorDestino } from './limite-por-destino';
import type { EtapaDeRegistro } from './registro';
import type { EtapaDeReivindicacao } from './reivindicacao';
import type { EtapaDeRetencao } from './retencao';
import type { EtapaDaSonda } from './sonda';
import { origemDoTrabalho, type Posse, tokenDe } from './trabalho';

/** The worker's stop, as the stages see it. */
export interface Parada {
  /** No new attempt: jobs go back to the queue. */
  parando: boolean;
  /** The stop's deadline passed: the POSTs under way were cut (their jobs go back untouched). */
  cortado: boolean;
}

export interface EtapasDaTentativa {
  destinos: Pick<Destinos, 'regras'>;
  limite: Pick<LimitePorDestino, 'entrar'>;
  parada: Parada;
  reivindicacao: Pick<EtapaDeReivindicacao, 'reivindicar'>;
  retencao: Pick<EtapaDeRetencao, 'reter' | 'semVez'>;
  sonda: Pick<EtapaDaSonda, 'naVez' | 'depoisDoEnvio'>;
  envio: Pick<EtapaDeEnvio, 'noTrecho' | 'enviar' | 'anotar'>;
  registro: Pick<EtapaDeRegistro, 'registrar'>;
  desfecho: Pick<EtapaDeDesfecho, 'envenenada' | 'atraso' | 'depoisDoRegistro'>;
}

/**
 * One job's way through the stages (architecture §5): held before its claim → claim → held after
 * it → its turn at the destination → the circuit's probe → sign and send → record → retry or error
 * queue. Each stage decides its own part; this only orders them.
 */
export class TentativaDeEntrega {
  constructor(private readonly e: EtapasDaTentativa) {}

  /** Sent, counted, recorded, and its retry or error-queue message published. */
  private async enviarERegistrar(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    reivindicada: Reivindicada,
    liberar: () => void,
    origem: string,
    posse: Posse,
    trecho: Trecho,
  ): Promise<Desfecho> {
    const { e } = this;
    const enviado = await e.envio.enviar(trabalho, reivindicada.url_de_destino, reivindicada, trecho);
    const { resultado } = enviado;
    liberar(); // the destination's turn is over with the POST; recording does not hold it
    // Cut short by the stop: not a real attempt; the job goes back to the queue untouched.
    if (e.parada.cortado && !resultado.sucesso) throw new TrabalhoDevolvido('cortado');
    await e.sonda.depoisDoEnvio(origem, resultado, posse);
    e.envio.anotar(trabalho, origem, resultado);
    // The next step and its expiry matter to a failure alone (its record's due dates, its retry).
    const atraso = e.desfecho.atraso(reivindicada, resultado);
    const registrada = await e.registro.registrar(trabalho, reivindicada, enviado, atraso, posse);
    if (!registrada) return 'ja_final';
    const anterior = trecho.span ? trecho.rastro?.[TRACEPARENT] : undefined;
    await e.desfecho.depoisDoRegistro(trabalho, message, registrada, resultado, atraso, anterior);
    return 'registrado';
  }

  /** The job from its claim to its record (or to wherever it waits instead); resolves when it may be acked. */
  async tentar(trabalho: TrabalhoDeEntrega, message: ConsumeMessage, posse: Posse): Promise<Desfecho> {
    const { e } = this;
    const { destinos, limite, parada } = e;
    const anterior = tokenDe(message);
    const origemDoJob = origemDoTrabalho(trabalho.url_de_destino);
    const regrasDoTrabalho = destinos.regras(origemDoJob);
    if (retido(regrasDoTrabalho)) return e.retencao.reter(trabalho, message, origemDoJob, anterior, regrasDoTrabalho);
    // Claimed before the destination's turn: the turn is held for the POST alone, not for a round
    // trip to the database (with one destination, its limit is what bounds the throughput).
    const reivindicacao = await e.reivindicacao.reivindicar(trabalho, anterior);
    if (reivindicacao.tipo === 'descartada') return 'descartado';
    if (reivindicacao.tipo === 'cancelada') return 'cancelado';
    if (reivindicacao.tipo === 'envenenada') return e.desfecho.envenenada(trabalho, message, reivindicacao.linha);
    const { linha: reivindicada, token } = reivindicacao;
    posse.token = token;
    // The subscription's URL now (a PATCH since the job was written moves the attempt with it).
    const origem = origemDoTrabalho(reivindicada.url_de_destino);
    const regras = destinos.regras(origem);
    if (retido(regras)) return e.retencao.reter(trabalho, message, origem, token, regras);
    const liberar = await limite.entrar(origem);
    if (parada.parando) {
      liberar?.();
      throw new TrabalhoDevolvido('parando');
    }
    if (!liberar) return e.retencao.semVez(trabalho, message, origem, token);
    try {
      const naVez = await e.sonda.naVez(trabalho, message, origem, token, posse);
      if (naVez !== 'segue') return naVez;
      return await e.envio.noTrecho(trabalho, message, reivindicada, origem, (trecho) =>
        this.enviarERegistrar(trabalho, message, reivindicada, liberar, origem, posse, trecho),
      );
    } finally {
      liberar();
    }
  }
}
