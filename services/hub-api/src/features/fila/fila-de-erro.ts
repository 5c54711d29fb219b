import type { Broker, Channel } from '@hub/broker';
import { EXCHANGES, trabalhoDeEntrega } from '@hub/contracts';

/** A message taken from a queue with basic.get, not yet settled. */
export type Mensagem = Exclude<Awaited<ReturnType<Channel['get']>>, false>;

/** Up to `limite` messages of a queue, taken unacked: they stay this channel's until settled. */
export async function lerMensagens(canal: Channel, fila: string, limite: number): Promise<Mensagem[]> {
  const lidas: Mensagem[] = [];
  while (lidas.length < limite) {
    const mensagem = await canal.get(fila, { noAck: false });
    if (!mensagem) break;
    lidas.push(mensagem);
  }
  return lidas;
}

/**
 * Waits for the acks sent on this channel before it closes. A quorum queue's channel sends its last
 * acks behind the ones still in flight, and closing the channel returns what is not settled yet
 * (seen: a few of 240 acked messages came back). One more synchronous get is answered only after
 * them; the one message it takes (a kept copy) is given back with a requeue.
 */
export async function assentarAcks(canal: Channel, fila: string): Promise<void> {
  const extra = await canal.get(fila, { noAck: false });
  if (extra) canal.nack(extra, false, true);
}

/** The delivery id of a job in the error queue; undefined when the body is not a delivery job. */
export function entregaIdDe(mensagem: Mensagem): string | undefined {
  return trabalhoDe(mensagem)?.entrega_id;
}

/** The delivery job a message carries; undefined when its body is not one. */
export function trabalhoDe(mensagem: Mensagem) {
  try {
    const job = trabalhoDeEntrega.schema.safeParse(JSON.parse(mensagem.content.toString('utf8')));
    return job.success ? job.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A confirmed copy of a message at the tail of the error queue, with the properties that say what
 * it is and why it is there. Copy first, ack after: a message is never requeued, so no delivery
 * count grows (a quorum queue may drop a message returned too often) and a crash between the two
 * leaves a duplicate, which the next reconciliation removes, never a loss.
 */
export function copiarNaFilaDeErro(broker: Pick<Broker, 'publish'>, mensagem: Mensagem): Promise<void> {
  const { contentType, contentEncoding, headers, messageId, timestamp, type, appId, correlationId } =
    mensagem.properties;
  const propriedades = { contentType, contentEncoding, headers, messageId, timestamp, type, appId, correlationId };
  return broker.publish(
    EXCHANGES.entregasErro,
    '',
    mensagem.content,
    Object.fromEntries(Object.entries(propriedades).filter(([, valor]) => valor !== undefined)),
  );
}
