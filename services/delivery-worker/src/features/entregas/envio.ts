import type { ConsumeMessage } from '@hub/broker';
import { CLOUDEVENTS_CONTENT_TYPE, corpoCloudEvents, type TrabalhoDeEntrega } from '@hub/contracts';
import { type KeyStore, signWebhookText, type WebhookHeaders } from '@hub/signing';
import { iniciarTrecho, rastreamentoLigado, rastroDe, SpanKind, TRACEPARENT, type Trecho } from '@hub/tracing';
import type { Reivindicada } from './linhas';
import type { Recursos } from './recursos';
import type { Remetente, ResultadoDoEnvio } from './remetente';
import { CABECALHO_TENTATIVA_ANTERIOR, doTrabalho } from './trabalho';

export interface VizinhosDoEnvio {
  keys: Pick<KeyStore, 'signersNow' | 'signers'>;
  remetente: Pick<Remetente, 'enviar' | 'cortar'>;
}

/** What a POST gave, with the signature headers it carried (recorded on the attempt). */
export interface Enviado {
  resultado: ResultadoDoEnvio;
  cabecalhos: WebhookHeaders;
}

/**
 * Sign and send (architecture §5, step 4): the attempt's span, the body in the subscription's
 * formato signed once, the POST, and the attempt's log line and metrics.
 */
export class EtapaDeEnvio {
  private readonly recursos: Recursos;
  private readonly vizinhos: VizinhosDoEnvio;

  constructor({ recursos, ...vizinhos }: { recursos: Recursos } & VizinhosDoEnvio) {
    this.recursos = recursos;
    this.vizinhos = vizinhos;
  }

  /**
   * Runs `tentativa` in the attempt's span (when tracing records): a child of the job's message
   * (its context in the headers), linked to the delivery's previous attempt; the POST is its child,
   * and the subscriber gets a traceparent of the trace either way.
   */
  async noTrecho<T>(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    reivindicada: Reivindicada,
    origem: string,
    tentativa: (trecho: Trecho) => Promise<T>,
  ): Promise<T> {
    this.recursos.metricas.trabalhos.inc({ desfecho: 'tentado' });
    const trecho = rastreamentoLigado()
      ? iniciarTrecho('entrega.tentativa', {
          tipo: SpanKind.CONSUMER,
          pai: message.properties.headers,
          links: [rastroDe({ [TRACEPARENT]: message.properties.headers?.[CABECALHO_TENTATIVA_ANTERIOR] })],
          atributos: {
            'hub.entrega_id': trabalho.entrega_id,
            'hub.evento_id': trabalho.evento_id,
            'hub.tentativa': reivindicada.tentativas_no_ciclo_atual + 1,
            'server.address': origem,
          },
        })
      : iniciarTrecho('entrega.tentativa', { pai: message.properties.headers });
    // Nothing recorded (tracing off): no span to end, so no async frame of its own around the attempt.
    if (!trecho.span) return tentativa(trecho);
    try {
      const valor = await tentativa(trecho);
      trecho.fim();
      return valor;
    } catch (error) {
      trecho.fim(error);
      throw error;
    }
  }

  /**
   * Signs and POSTs. The subscription's formato at this attempt: a CloudEvents subscription's body
   * is made from the job's, the same bytes on every attempt (docs/contract.md §11). The body's bytes
   * once, written beside the signature's prefix: signed, and the same bytes sent.
   */
  async enviar(trabalho: TrabalhoDeEntrega, url: string, reivindicada: Reivindicada, trecho: Trecho): Promise<Enviado> {
    const { metricas, config } = this.recursos;
    const { keys, remetente } = this.vizinhos;
    const cloudEvents = reivindicada.formato === 'cloudevents';
    const texto = cloudEvents ? corpoCloudEvents(trabalho.corpo, config.urlDoEsquema) : trabalho.corpo;
    const { headers: cabecalhos, body: corpo } = signWebhookText(
      { id: trabalho.entrega_id, body: texto },
      keys.signersNow() ?? (await keys.signers()),
    );
    metricas.emVoo.inc();
    const tipoDoConteudo = cloudEvents ? CLOUDEVENTS_CONTENT_TYPE : 'application/json';
    const resultado = await trecho.ativo(() => remetente.enviar(url, corpo, cabecalhos, trecho.rastro, tipoDoConteudo));
    if (trecho.span) {
      trecho.atributos({ 'hub.resultado': resultado.sucesso ? 'sucesso' : 'falha' });
      if (resultado.statusHttp !== null) trecho.atributos({ 'http.response.status_code': resultado.statusHttp });
    }
    metricas.emVoo.dec();
    return { resultado, cabecalhos };
  }

  /**
   * The attempt's line and metrics. A failed attempt is a line at info; a successful one only at
   * debug: its row in tentativa and the metrics tell it, and a line per delivery was the worker's
   * largest cost after the POST and the signature (docs/decisions/delivery-worker-cpu.md).
   */
  anotar(trabalho: TrabalhoDeEntrega, origem: string, resultado: ResultadoDoEnvio): void {
    const { metricas, logger } = this.recursos;
    const rotulo = resultado.sucesso ? 'sucesso' : 'falha';
    const nivel = resultado.sucesso ? 'debug' : 'info';
    if (logger.isLevelEnabled(nivel))
      logger[nivel](
        {
          ...doTrabalho(trabalho),
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
    metricas.tentativasPorDestino.inc({ origem, resultado: rotulo });
    metricas.duracao.observe({ resultado: rotulo }, resultado.duracaoMs / 1000);
  }

  /** Cuts every POST under way (the stop's deadline passed). */
  cortar(): void {
    this.vizinhos.remetente.cortar();
  }
}
