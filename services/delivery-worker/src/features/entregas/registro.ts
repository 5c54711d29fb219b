import type { TrabalhoDeEntrega } from '@hub/contracts';
import { uuidv7 } from '@hub/database';
import type { WebhookHeaders } from '@hub/signing';
import { Lote } from '../../lote';
import type { Registrada, Registro, Reivindicada } from './linhas';
import { medida, type Recursos } from './recursos';
import type { ResultadoDoEnvio } from './remetente';
import { doTrabalho, type Posse } from './trabalho';
import type { PassagemDaVez } from './vez';

/** The next step of a failed attempt: the delay queue it waits in and its own expiry. */
export interface Atraso {
  passoMs: number;
  expiracaoMs: number;
}

/** The attempt's row: its due dates from `atraso` (a failure), a 410's switch-off. */
export function registroDaTentativa(
  trabalho: TrabalhoDeEntrega,
  resultado: ResultadoDoEnvio,
  cabecalhos: WebhookHeaders,
  atraso: Atraso | undefined,
): Registro {
  const encerrar = resultado.statusHttp === 410;
  const fim = resultado.iniciadaEm.getTime() + resultado.duracaoMs;
  return {
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
    proxima_tentativa_em: atraso ? new Date(fim + atraso.expiracaoMs) : null,
    retorno_ate: atraso ? new Date(fim + atraso.passoMs) : null,
  };
}

/**
 * Record (architecture §5, step 5): the attempt, the delivery's new state and the hour's tallies in
 * one batched statement, one under way at a time, at least DELIVERY_RECORD_SPACING apart; a
 * delivery made final passes its entity's turn.
 */
export class EtapaDeRegistro {
  private readonly registros: Lote<Registro, Registrada | undefined>;

  private readonly recursos: Recursos;
  private readonly vizinhos: { vez: Pick<PassagemDaVez, 'passar'> };

  constructor({ recursos, ...vizinhos }: { recursos: Recursos; vez: Pick<PassagemDaVez, 'passar'> }) {
    this.recursos = recursos;
    this.vizinhos = vizinhos;
    const { repo, config } = recursos;
    this.registros = new Lote(
      async (lote) => {
        const linhas = await repo.registrar(lote);
        const porId = new Map(linhas.map((l) => [l.id, l]));
        return lote.map((r) => porId.get(r.entrega_id));
      },
      { paralelos: 1, espacamento: config.espacamentoDosRegistrosMs ?? 0, aoEsvaziar: medida(recursos, 'registro') },
    );
  }

  /**
   * Records the attempt; the claim is over. Nothing when another attempt had made the delivery
   * final meanwhile. Urgent for an ordered delivery (the next event of its entity waits for this
   * record) and for a job of an isolated destination's queue (its prefetch waits for it).
   */
  async registrar(
    trabalho: TrabalhoDeEntrega,
    reivindicada: Reivindicada,
    enviado: { resultado: ResultadoDoEnvio; cabecalhos: WebhookHeaders },
    atraso: Atraso | undefined,
    posse: Posse,
  ): Promise<Registrada | undefined> {
    const { metricas, logger } = this.recursos;
    const registrada = await this.registros.add(
      registroDaTentativa(trabalho, enviado.resultado, enviado.cabecalhos, atraso),
      reivindicada.sequencia !== null || posse.doDestino === true,
    );
    posse.token = undefined; // recorded: the claim is over
    if (!registrada) {
      logger.info(doTrabalho(trabalho), 'delivery finished by another attempt meanwhile');
      return undefined;
    }
    metricas.situacoes.inc({ situacao: registrada.situacao });
    if (registrada.situacao !== 'aguardando_nova_tentativa') await this.vizinhos.vez.passar([registrada]);
    return registrada;
  }

  /** The records waiting for DELIVERY_RECORD_SPACING go now (the stop: their acks, and so the drain, wait for them). */
  semEspacamento(): void {
    this.registros.semEspacamento();
  }
}
