import { trabalhoDeEntrega } from '@hub/contracts';
import { Lote } from '../../lote';
import { type Final, trabalhoDaLinha } from './linhas';
import { medida, type Recursos } from './recursos';

/** A delivery as far as the turn of its entity goes: an unordered one has no sequencia. */
export interface Ordenavel {
  assinatura_id: string;
  entidade_id: string;
  sequencia: string | null;
}

/**
 * Ordered delivery (docs/decisions/ordered-delivery-per-entity.md): a delivery of an ordered
 * subscription made final here passes its entity's turn to the next delivery, whose job, held back
 * since its publication, is published now. Batched like the claims and records (one
 * liberar_seguintes for the turns passed together, their jobs published at once, confirmed), apart
 * from the record's own batch, which it would otherwise hold; the job that made the delivery final
 * is acked after. A turn not passed (this process dies, the database or the broker fails) is the
 * sweeper's: a released delivery whose job is lost is due now, a turn not passed is found by
 * recolherVezesPerdidas.
 */
export class PassagemDaVez {
  private readonly vezes: Lote<Final, undefined>;

  private readonly recursos: Recursos;

  constructor({ recursos }: { recursos: Recursos }) {
    this.recursos = recursos;
    this.vezes = new Lote<Final, undefined>((finais) => this.passarJuntas(finais), {
      aoEsvaziar: medida(recursos, 'vez'),
    });
  }

  /**
   * Passes the turn of the ordered deliveries among these that are final (an unordered one has no
   * sequencia). Nearly every delivery is unordered: then nothing is made, not even a promise (an
   * allocation profile found an empty filter and Promise.all here for every delivery).
   */
  passar(linhas: readonly Ordenavel[]): Promise<unknown> | undefined {
    if (!linhas.some((l) => l.sequencia !== null)) return undefined;
    return Promise.all(
      linhas
        .filter((l) => l.sequencia !== null)
        .map((l) =>
          this.vezes.add({ assinatura_id: l.assinatura_id, entidade_id: l.entidade_id, sequencia: l.sequencia! }),
        ),
    );
  }

  private async passarJuntas(finais: Final[]): Promise<undefined[]> {
    const { repo, broker, topologia, metricas, logger } = this.recursos;
    try {
      const liberadas = await repo.passarAVez(finais);
      await Promise.all(
        liberadas.map((l) =>
          broker.publish(
            topologia.entregas,
            trabalhoDeEntrega.routingKey,
            Buffer.from(JSON.stringify(trabalhoDaLinha(l))),
            {
              messageId: l.entrega_id,
              contentType: 'application/json',
              mandatory: true,
            },
          ),
        ),
      );
      if (liberadas.length > 0) metricas.trabalhos.inc({ desfecho: 'liberado' }, liberadas.length);
    } catch (error) {
      logger.warn({ err: error, entregas: finais.length }, 'turn of an ordered entity not passed; the sweeper will');
    }
    return finais.map(() => undefined);
  }
}
