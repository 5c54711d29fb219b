import { ATTEMPT_HEADER, type ConsumeMessage, RequeueMessage } from '@hub/broker';
import { ERROR_QUEUE_HEADERS, type TrabalhoDeEntrega } from '@hub/contracts';
import { proximoAtraso } from './atrasos';
import { type Registrada, type Reivindicada, trabalhoDaLinha } from './linhas';
import { type MotivoDaFilaDeErro, TrabalhoDevolvido } from './erros';
import { Parando } from './limite-por-destino';
import type { EtapaDeReivindicacao } from './reivindicacao';
import type { Recursos } from './recursos';
import type { Atraso } from './registro';
import type { ResultadoDoEnvio } from './remetente';
import type { EtapaDaSonda } from './sonda';
import {
  CABECALHO_TENTATIVA_ANTERIOR,
  doTrabalho,
  levarReivindicacao,
  type Posse,
  paraAEscada,
  republicar,
  UUID,
} from './trabalho';
import type { PassagemDaVez } from './vez';

export interface VizinhosDoDesfecho {
  vez: Pick<PassagemDaVez, 'passar'>;
  reivindicacao: Pick<EtapaDeReivindicacao, 'liberar'>;
  sonda: Pick<EtapaDaSonda, 'devolver'>;
}

/** What the error queue's headers say of a delivery. */
const cabecalhosDaFilaDeErro = (tentativas: number, ultimoErro: string | null, motivo: MotivoDaFilaDeErro) => ({
  [ERROR_QUEUE_HEADERS.tentativas]: tentativas,
  [ERROR_QUEUE_HEADERS.ultimoErro]: (ultimoErro ?? '').slice(0, 500),
  [ERROR_QUEUE_HEADERS.motivo]: motivo,
});

/** The error queue's headers of a poison job (its claims died, or its message could not be read). */
const cabecalhosDoVeneno = (linha: { tentativas_no_ciclo_atual: number; ultimo_erro: string | null }) =>
  cabecalhosDaFilaDeErro(linha.tentativas_no_ciclo_atual, linha.ultimo_erro, 'limite_de_entregas');

/**
 * Retry or error queue (architecture §5, outcomes): after its record a failed delivery's job goes
 * to the delay queue of its step, or, out of attempts or gone (410), to the error queue; a poison job
 * (its claims died, it cannot be read, or it failed the consumer's last try) goes there too, once.
 * The state is committed before the job is published (confirmed); the consumer acks after.
 */
export class EtapaDeDesfecho {
  private readonly recursos: Recursos;
  private readonly vizinhos: VizinhosDoDesfecho;

  constructor({ recursos, ...vizinhos }: { recursos: Recursos } & VizinhosDoDesfecho) {
    this.recursos = recursos;
    this.vizinhos = vizinhos;
  }

  /** The next step of a failed attempt (its record's due dates, its retry); none for a success. */
  atraso(reivindicada: Reivindicada, resultado: ResultadoDoEnvio): Atraso | undefined {
    const { config, relogio } = this.recursos;
    if (resultado.sucesso) return undefined;
    const tentativas = reivindicada.tentativas_no_ciclo_atual + 1;
    return proximoAtraso(tentativas, config.passosMs, resultado.retryAfterMs, relogio.aleatorio);
  }

  /**
   * After the record: a delivery waiting for its next attempt has its job published to its step's
   * delay queue (carrying the attempt's traceparent, `anterior`); one in fila_de_erro, to the error
   * queue with why.
   */
  async depoisDoRegistro(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    registrada: Registrada,
    resultado: ResultadoDoEnvio,
    atraso: Atraso | undefined,
    anterior: string | undefined,
  ): Promise<void> {
    const { topologia, logger, config, relogio } = this.recursos;
    if (registrada.situacao === 'cancelada') {
      logger.info(doTrabalho(trabalho), 'subscription deleted during the attempt: delivery cancelled');
    } else if (registrada.situacao === 'aguardando_nova_tentativa') {
      const { passoMs, expiracaoMs } =
        atraso ??
        proximoAtraso(registrada.tentativas_no_ciclo_atual, config.passosMs, resultado.retryAfterMs, relogio.aleatorio);
      await paraAEscada(this.recursos, passoMs, message, {
        expiration: String(expiracaoMs),
        ...(anterior ? { headers: { [CABECALHO_TENTATIVA_ANTERIOR]: anterior } } : {}),
      });
    } else if (registrada.situacao === 'fila_de_erro') {
      const encerrar = resultado.statusHttp === 410;
      const motivo = encerrar ? 'assinatura_encerrada' : 'tentativas_esgotadas';
      await republicar(this.recursos, topologia.entregasErro, '', message, {
        headers: cabecalhosDaFilaDeErro(registrada.tentativas_no_ciclo_atual, resultado.erro, motivo),
      });
      logger.warn(
        { ...doTrabalho(trabalho), erro: resultado.erro, tentativas: registrada.tentativas_no_ciclo_atual },
        encerrar
          ? 'subscription gone (410): delivery in the error queue'
          : 'delivery out of attempts: in the error queue',
      );
    }
  }

  /** A poison job (its claims kept dying with their worker): its delivery is fila_de_erro already. */
  async envenenada(trabalho: TrabalhoDeEntrega, message: ConsumeMessage, linha: Reivindicada): Promise<'envenenado'> {
    await republicar(this.recursos, this.recursos.topologia.entregasErro, '', message, {
      headers: cabecalhosDoVeneno(linha),
    });
    this.contarVeneno();
    this.recursos.logger.warn(
      { ...doTrabalho(trabalho), erro: linha.ultimo_erro },
      'poison job: delivery in the error queue',
    );
    return 'envenenado';
  }

  /**
   * A message that is not a delivery job. When its message id names a delivery still open, that
   * delivery goes to fila_de_erro and its job, rebuilt from the database, to the error queue, once;
   * otherwise the broker dead-letters the message as it came.
   */
  async ilegivel(message: ConsumeMessage, error: unknown): Promise<void> {
    const { repo, broker, topologia, logger } = this.recursos;
    const id = message.properties.messageId;
    const motivo = error instanceof Error ? error.message : String(error);
    const [linha] =
      typeof id === 'string' && UUID.test(id)
        ? await repo.envenenar(id, null, `poison job: its message could not be read (${motivo.slice(0, 500)})`)
        : [];
    if (!linha) throw error;
    await this.vizinhos.vez.passar([linha]);
    await broker.publish(topologia.entregasErro, '', Buffer.from(JSON.stringify(trabalhoDaLinha(linha))), {
      messageId: linha.entrega_id,
      contentType: 'application/json',
      mandatory: true,
      headers: cabecalhosDoVeneno(linha),
    });
    this.contarVeneno();
    logger.warn({ entrega_id: linha.entrega_id, erro: motivo }, 'unreadable job: delivery in the error queue');
  }

  /**
   * A job that fails after its claim: given back when the worker is stopping (its delivery waits
   * again, claimable at once); on the consumer's last try, its delivery goes to fila_de_erro before
   * the broker dead-letters the job (a poison job, once); otherwise its retry carries the claim.
   * Gives the error the consumer must see.
   */
  async depoisDaFalha(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    posse: Posse,
    error: unknown,
  ): Promise<unknown> {
    const { repo, logger, config } = this.recursos;
    const { vez, reivindicacao, sonda } = this.vizinhos;
    await sonda.devolver(posse);
    if (error instanceof Parando || error instanceof RequeueMessage) {
      if (posse.token) await reivindicacao.liberar(trabalho, posse.token);
      return error instanceof Parando ? new TrabalhoDevolvido('parando') : error;
    }
    const tentativa = Number(message.properties.headers?.[ATTEMPT_HEADER]) || 1;
    if (tentativa >= config.tentativasDoConsumidor) {
      const motivo = error instanceof Error ? error.message : String(error);
      const envenenada = await repo
        .envenenar(
          trabalho.entrega_id,
          posse.token ?? null,
          `poison job: the worker failed on it ${tentativa} times (${motivo.slice(0, 500)})`,
        )
        .catch((e) => {
          logger.warn({ ...doTrabalho(trabalho), err: e }, 'poison job not marked');
          return [];
        });
      await vez.passar(envenenada);
    } else if (posse.token) {
      // The consumer's retry publishes the job with its headers: the claim travels with it.
      levarReivindicacao(message, posse.token);
    }
    return error;
  }

  private contarVeneno(): void {
    this.recursos.metricas.trabalhos.inc({ desfecho: 'envenenado' });
    this.recursos.metricas.situacoes.inc({ situacao: 'fila_de_erro' });
  }
}
