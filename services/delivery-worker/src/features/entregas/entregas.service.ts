import { setMaxListeners } from 'node:events';
import { type Broker, type ConsumeMessage, decode, RequeueMessage } from '@hub/broker';
import { type DeliveryTopology, ERROR_QUEUE_HEADERS, type TrabalhoDeEntrega, trabalhoDeEntrega } from '@hub/contracts';
import { uuidv7 } from '@hub/database';
import { type Logger, withRequestContext } from '@hub/log';
import { type KeyStore, signWebhook } from '@hub/signing';
import { Lote } from '../../lote';
import type { Metricas } from '../../metricas';
import type { Destinos } from '../destinos/destinos';
import { proximoAtraso } from './atrasos';
import type { EntregasRepository, Registrada, Registro, Reivindicada } from './entregas.repository';
import { LimitePorDestino, Parando } from './limite-por-destino';
import type { Remetente } from './remetente';

export interface EntregasDeps {
  repo: EntregasRepository;
  broker: Broker;
  topologia: DeliveryTopology;
  keys: KeyStore;
  remetente: Remetente;
  logger: Logger;
  metricas: Metricas;
  passosMs: readonly number[];
  /** The destinations' limits and pauses (the rows of destino, this process's share). */
  destinos: Pick<Destinos, 'regras' | 'anotar' | 'aoMudar'>;
  /** How long a job may wait in memory for its destination's turn before it is deferred. */
  esperaPorDestinoMs: number;
}

/** The delay step a job of a paused destination waits in before it looks again: the longest up to a minute. */
export function passoDaPausa(passosMs: readonly number[]): number {
  const ate1Minuto = passosMs.filter((p) => p <= 60_000);
  return ate1Minuto.length > 0 ? Math.max(...ate1Minuto) : Math.min(...passosMs);
}

/**
 * The attempt of one delivery job (DESIGN §5): claim (batched with the jobs arriving together),
 * sign, POST, record attempt + state + tallies (batched, one statement), then publish the retry or
 * the error-queue message with a confirm; the consumer acks only after all of that.
 */
export function entregasService(deps: EntregasDeps) {
  const { repo, broker, topologia, logger, metricas } = deps;
  const { destinos } = deps;
  const limite = new LimitePorDestino((origem) => destinos.regras(origem), deps.esperaPorDestinoMs);
  destinos.aoMudar(() => limite.reavaliar());
  const reivindicacoes = new Lote<string, Reivindicada | undefined>(async (ids) => {
    const linhas = await repo.reivindicar([...new Set(ids)]);
    const porId = new Map(linhas.map((l) => [l.id, l]));
    return ids.map((id) => porId.get(id));
  });
  const registros = new Lote<Registro, Registrada | undefined>(async (lote) => {
    const linhas = await repo.registrar(lote);
    const porId = new Map(linhas.map((l) => [l.id, l]));
    return lote.map((r) => porId.get(r.entrega_id));
  });
  /** Delivery ids with a job under way in this process, and that job's work. */
  const emCurso = new Map<string, Promise<void>>();
  const paragem = new AbortController();
  setMaxListeners(0, paragem.signal); // one listener per POST under way
  let parando = false;

  /** The job as it came (body unchanged), message id = delivery id, mandatory and confirmed. */
  const publicar = (exchange: string, routingKey: string, message: ConsumeMessage, extra: object) =>
    broker.publish(exchange, routingKey, message.content, {
      messageId: decode(trabalhoDeEntrega, message).entrega_id,
      contentType: 'application/json',
      mandatory: true,
      ...extra,
    });

  /** The destination stayed at its limit for the whole wait: the job waits in the shortest delay queue instead. */
  async function adiar(message: ConsumeMessage): Promise<void> {
    await esperarNaFila(message, Math.min(...deps.passosMs), 'adiado');
    metricas.adiadas.inc();
  }

  /** The job, unchanged and unclaimed, into the delay queue of `passoMs`; it comes back to be looked at again. */
  async function esperarNaFila(message: ConsumeMessage, passoMs: number, desfecho: string): Promise<void> {
    await publicar(topologia.entregasAtraso, topologia.filaDeAtraso(passoMs), message, {});
    metricas.trabalhos.inc({ desfecho });
  }

  /**
   * A paused destination: the job waits in a delay queue and looks again, the delivery untouched
   * (no claim, no attempt, nothing counted); the sweeper leaves its deliveries alone meanwhile.
   */
  const esperarPausa = (message: ConsumeMessage) => esperarNaFila(message, passoDaPausa(deps.passosMs), 'pausado');

  async function tentar(trabalho: TrabalhoDeEntrega, message: ConsumeMessage, origem: string): Promise<void> {
    if (destinos.regras(origem).pausado) return esperarPausa(message);
    // Claimed before the destination's turn: the turn is held for the POST alone, not for a round
    // trip to the database (with one destination, its limit is what bounds the throughput).
    const reivindicada = await reivindicacoes.add(trabalho.entrega_id);
    if (!reivindicada) {
      metricas.trabalhos.inc({ desfecho: 'descartado' });
      logger.debug({ entrega_id: trabalho.entrega_id }, 'delivery final or unknown: job dropped');
      return;
    }
    if (reivindicada.situacao === 'cancelada') {
      metricas.trabalhos.inc({ desfecho: 'cancelado' });
      metricas.situacoes.inc({ situacao: 'cancelada' });
      logger.info({ entrega_id: trabalho.entrega_id }, 'subscription off: delivery cancelled');
      return;
    }
    const liberar = await limite.entrar(origem);
    if (parando) {
      liberar?.();
      throw new RequeueMessage('the worker is stopping');
    }
    if (!liberar) return adiar(message);
    try {
      await enviarERegistrar(trabalho, message, reivindicada, liberar, origem);
    } finally {
      liberar();
    }
  }

  async function enviarERegistrar(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    reivindicada: Reivindicada,
    liberar: () => void,
    origem: string,
  ): Promise<void> {
    metricas.trabalhos.inc({ desfecho: 'tentado' });
    const cabecalhos = signWebhook({ id: trabalho.entrega_id, body: trabalho.corpo }, await deps.keys.signers());
    metricas.emVoo.inc();
    const resultado = await deps.remetente.enviar(trabalho.url_de_destino, trabalho.corpo, cabecalhos, paragem.signal);
    metricas.emVoo.dec();
    liberar(); // the destination's turn is over with the POST; recording does not hold it
    if (paragem.signal.aborted && !resultado.sucesso) {
      // Cut short by the stop: not a real attempt; the job goes back to the queue untouched.
      throw new RequeueMessage('the worker stopped during the attempt');
    }
    destinos.anotar(origem, resultado.sucesso, resultado.duracaoMs, resultado.iniciadaEm);
    const rotulo = resultado.sucesso ? 'sucesso' : 'falha';
    logger.info(
      {
        entrega_id: trabalho.entrega_id,
        evento_id: trabalho.evento_id,
        origem,
        resultado: rotulo,
        status_http: resultado.statusHttp,
        duracao_ms: resultado.duracaoMs,
        ...(resultado.erro ? { erro: resultado.erro } : {}),
      },
      'delivery attempt',
    );
    metricas.tentativas.inc({ resultado: rotulo });
    metricas.duracao.observe({ resultado: rotulo }, resultado.duracaoMs / 1000);
    const encerrar = resultado.statusHttp === 410;
    const atraso = proximoAtraso(reivindicada.tentativas_no_ciclo_atual + 1, deps.passosMs, resultado.retryAfterMs);
    const registrada = await registros.add({
      entrega_id: trabalho.entrega_id,
      tentativa_id: uuidv7(resultado.iniciadaEm.getTime()),
      iniciada_em: resultado.iniciadaEm,
      duracao_ms: resultado.duracaoMs,
      status_http: resultado.statusHttp,
      sucesso: resultado.sucesso,
      resposta: resultado.resposta,
      erro: encerrar ? `${resultado.erro} (410 Gone: the subscription is switched off)` : resultado.erro,
      cabecalhos,
      encerrar,
      proxima_tentativa_em: new Date(resultado.iniciadaEm.getTime() + resultado.duracaoMs + atraso.expiracaoMs),
    });
    if (!registrada) {
      logger.info({ entrega_id: trabalho.entrega_id }, 'delivery finished by another attempt meanwhile');
      return;
    }
    metricas.situacoes.inc({ situacao: registrada.situacao });
    if (registrada.situacao === 'aguardando_nova_tentativa') {
      await publicar(topologia.entregasAtraso, topologia.filaDeAtraso(atraso.passoMs), message, {
        expiration: String(atraso.expiracaoMs),
      });
    } else if (registrada.situacao === 'fila_de_erro') {
      await publicar(topologia.entregasErro, '', message, {
        headers: {
          [ERROR_QUEUE_HEADERS.tentativas]: registrada.tentativas_no_ciclo_atual,
          [ERROR_QUEUE_HEADERS.ultimoErro]: (resultado.erro ?? '').slice(0, 500),
          [ERROR_QUEUE_HEADERS.motivo]: encerrar ? 'assinatura_encerrada' : 'tentativas_esgotadas',
        },
      });
      logger.warn(
        { entrega_id: trabalho.entrega_id, erro: resultado.erro, tentativas: registrada.tentativas_no_ciclo_atual },
        encerrar
          ? 'subscription gone (410): delivery in the error queue'
          : 'delivery out of attempts: in the error queue',
      );
    }
  }

  return {
    limite,

    /** The consumer's handler: resolves when the job may be acked. */
    async processar(message: ConsumeMessage): Promise<void> {
      const trabalho = decode(trabalhoDeEntrega, message);
      if (parando) throw new RequeueMessage('the worker is stopping');
      let origem: string;
      try {
        // The URL's origin, as the destino rows name it (origem_da_url of the stored, normalised URL).
        origem = new URL(trabalho.url_de_destino).origin;
      } catch {
        origem = 'invalida';
      }
      // A second job of a delivery under way here waits for the first, then claims as usual (dropped
      // if the first finished it). Never acked at once: after a broker connection loss the copy is
      // the redelivery of the first job, whose own ack (or retry publish) is lost with the old channel.
      const anterior = emCurso.get(trabalho.entrega_id);
      if (anterior) {
        metricas.trabalhos.inc({ desfecho: 'duplicado' });
        logger.debug({ entrega_id: trabalho.entrega_id }, 'a job of this delivery is under way here: waiting for it');
      }
      const trabalhar = async () => {
        if (anterior) {
          await anterior.catch(() => undefined);
          if (parando) throw new RequeueMessage('the worker is stopping');
        }
        await tentar(trabalho, message, origem);
      };
      // Every log line of the job carries the request id of the publication that caused it.
      const atual = trabalho.request_id ? withRequestContext(trabalho.request_id, trabalhar) : trabalhar();
      emCurso.set(trabalho.entrega_id, atual);
      try {
        await atual;
      } catch (error) {
        if (error instanceof Parando) throw new RequeueMessage(error.message);
        throw error;
      } finally {
        if (emCurso.get(trabalho.entrega_id) === atual) emCurso.delete(trabalho.entrega_id);
      }
    },

    /**
     * Stop: jobs not started go back to the queue now; POSTs under way get `prazoMs` to finish,
     * then they are cut and their jobs go back too. Resolves at once; the consumer's close waits.
     */
    parar(prazoMs: number): void {
      parando = true;
      limite.dispensarEsperas();
      setTimeout(() => paragem.abort(), prazoMs).unref();
    },
  };
}
export type EntregasService = ReturnType<typeof entregasService>;
