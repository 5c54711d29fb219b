import { corpoDaEntrega, type TrabalhoDeEntrega, trabalhoDeEntrega } from '@hub/contracts';
import { runOnPrisma } from '@hub/database';
import type { OutboxMessage } from '@hub/outbox';
import type { DbClient } from '../../db';
import { ENTREGA_TRABALHOS } from './entregas.sql';

export interface LinhaDoTrabalho {
  entrega_id: string;
  evento_id: string;
  assinatura_id: string;
  url_de_destino: string;
  tipo: string;
  versao_do_esquema: number;
  entidade_id: string;
  ocorrido_em: Date;
  recebido_em: Date;
  aplicativo_publicador_id: string;
  dados: string;
  teste: boolean;
  sequencia: number | null;
}

/**
 * The delivery jobs of these deliveries, rebuilt from the database (a new cycle, or a job the error
 * queue lost): what publication would have written, to the delivery's current url_de_destino.
 * Deliveries that no longer exist are absent from the map.
 */
export async function trabalhosDasEntregas(
  cliente: DbClient,
  ids: readonly string[],
  requestId: string | null = null,
): Promise<Map<string, TrabalhoDeEntrega>> {
  const trabalhos = new Map<string, TrabalhoDeEntrega>();
  if (ids.length === 0) return trabalhos;
  const linhas = await runOnPrisma(cliente, ENTREGA_TRABALHOS, [ids]);
  for (const l of linhas)
    trabalhos.set(
      l.entrega_id,
      trabalhoDeEntrega.schema.parse({
        entrega_id: l.entrega_id,
        evento_id: l.evento_id,
        assinatura_id: l.assinatura_id,
        url_de_destino: l.url_de_destino,
        // An ordered delivery keeps its sequencia: a resend goes at once, in its original place.
        corpo: corpoDaEntrega(l, l.assinatura_id, l.dados, l.sequencia),
        request_id: requestId,
      }),
    );
  return trabalhos;
}

/** A job as an outbox row: published to the work exchange after commit, message id = delivery id. */
export const mensagemDoTrabalho = (trabalho: TrabalhoDeEntrega): OutboxMessage => ({
  exchange: trabalhoDeEntrega.exchange,
  routingKey: trabalhoDeEntrega.routingKey,
  messageId: trabalho.entrega_id,
  body: trabalho,
});
