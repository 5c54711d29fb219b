import type { ConsumeMessage } from '@hub/broker';
import type { KeyStore } from '@hub/signing';
import type { Destinos } from '../destinos/destinos';
import type { Isolamento } from '../destinos/isolamento';
import { EtapaDeDesfecho } from './desfecho';
import { EtapaDeEnvio } from './envio';
import { LimitePorDestino } from './limite-por-destino';
import { EtapaDeRegistro } from './registro';
import { EtapaDeReivindicacao } from './reivindicacao';
import type { Recursos } from './recursos';
import type { Remetente } from './remetente';
import { EtapaDeRetencao } from './retencao';
import { EtapaDaSonda } from './sonda';
import { type Parada, TentativaDeEntrega } from './tentativa';
import { EtapaDeTomada } from './tomada';
import { PassagemDaVez } from './vez';

export { passoDaPausa } from './retencao';
export { CABECALHO_REIVINDICACAO, CABECALHO_TENTATIVA_ANTERIOR } from './trabalho';

export interface EntregasDeps {
  /** What every stage shares: config, repository, broker, topology, metrics, clock, logger. */
  recursos: Recursos;
  keys: Pick<KeyStore, 'signersNow' | 'signers'>;
  remetente: Pick<Remetente, 'enviar' | 'cortar'>;
  /** The destinations' limits, pauses and circuits (the rows of destino, this process's share). */
  destinos: Pick<Destinos, 'regras' | 'anotar' | 'aoMudar' | 'sondar' | 'concluirSonda' | 'devolverSonda'>;
  /** The destinations with a queue of their own (architecture §5, fair scheduling). */
  isolamento: Pick<Isolamento, 'rotaDe' | 'reter' | 'anotarAdiamento' | 'anotarTrabalho' | 'aoIsolar'>;
}

/**
 * The attempt of one delivery job (architecture §5), stage by stage: take, claim (batched with the
 * jobs arriving together), hold or forward, the circuit's probe, sign and POST, record attempt +
 * state + tallies (batched, one statement), then publish the retry or the error-queue message with
 * a confirm; the consumer acks only after all of that. This wires the stages (docs/architecture.md
 * §5, "The delivery worker's stages"); each owns its rules.
 */
export function entregasService(deps: EntregasDeps) {
  const { recursos, destinos, isolamento } = deps;
  const limite = new LimitePorDestino((origem) => destinos.regras(origem), recursos.config.esperaPorDestinoMs);
  destinos.aoMudar(() => limite.reavaliar());
  // Jobs waiting here for a turn at a destination just isolated leave for its queue at once.
  isolamento.aoIsolar((origem) => limite.dispensar(origem));
  const parada: Parada = { parando: false, cortado: false };

  const vez = new PassagemDaVez({ recursos });
  const reivindicacao = new EtapaDeReivindicacao({ recursos, vez });
  const retencao = new EtapaDeRetencao({ recursos, isolamento, reivindicacao });
  const sonda = new EtapaDaSonda({ destinos, retencao });
  const envio = new EtapaDeEnvio({ recursos, keys: deps.keys, remetente: deps.remetente });
  const registro = new EtapaDeRegistro({ recursos, vez });
  const desfecho = new EtapaDeDesfecho({ recursos, vez, reivindicacao, sonda });
  const tentativa = new TentativaDeEntrega({
    destinos,
    limite,
    parada,
    reivindicacao,
    retencao,
    sonda,
    envio,
    registro,
    desfecho,
  });
  const tomada = new EtapaDeTomada({ recursos, parada, retencao, tentativa, desfecho });
  // The consumer awaits the job and nothing more: its outcome (the stages' Desfecho) is for the tests.
  const processar = (message: ConsumeMessage, doDestino: boolean) =>
    tomada.processar(message, doDestino) as Promise<unknown> as Promise<void>;

  return {
    limite,

    /**
     * The handler of the shared work queue: resolves when the job may be acked. A job of an isolated
     * destination (published before the isolation was known, or back from a delay queue) is sent
     * on to its destination's queue, untouched.
     */
    processar(message: ConsumeMessage): Promise<void> {
      return processar(message, false);
    },

    /** The handler of an isolated destination's own queue. */
    processarDoDestino(message: ConsumeMessage): Promise<void> {
      return processar(message, true);
    },

    /**
     * Stop: jobs not started go back to the queue now; POSTs under way get `prazoMs` to finish,
     * then they are cut and their jobs go back too. Resolves at once; the consumer's close waits.
     */
    parar(prazoMs: number): void {
      parada.parando = true;
      limite.dispensarEsperas();
      // The records waiting for DELIVERY_RECORD_SPACING go now: their acks, and so the drain, wait for them.
      registro.semEspacamento();
      setTimeout(() => {
        parada.cortado = true;
        envio.cortar();
      }, prazoMs).unref();
    },
  };
}
export type EntregasService = ReturnType<typeof entregasService>;
