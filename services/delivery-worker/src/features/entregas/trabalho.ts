import type { ConsumeMessage } from '@hub/broker';
import { decode, retryRoute } from '@hub/broker';
import { type TrabalhoDeEntrega, trabalhoDeEntrega } from '@hub/contracts';
import { origemDaUrl } from '@hub/destinations';
import { comRastro, rastroDe } from '@hub/tracing';
import type { Recursos } from './recursos';

/**
 * The header with the token of its delivery's claim that a job carries when it leaves the worker
 * still holding the claim (deferred, paused after its claim, or retried by the consumer after a
 * failure): back, it continues that claim, which no other job can take while its lease lasts.
 */
export const CABECALHO_REIVINDICACAO = 'hub-reivindicacao';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The header with the `traceparent` of a delivery's last attempt that its retry carries: the next
 * attempt's span links to it (docs/decisions/tracing.md).
 */
export const CABECALHO_TENTATIVA_ANTERIOR = 'hub-tentativa-anterior';

/** The claim token a job carries, if any (anything else in the header is ignored). */
export function tokenDe(message: ConsumeMessage): string | null {
  const valor = message.properties.headers?.[CABECALHO_REIVINDICACAO];
  return typeof valor === 'string' && UUID.test(valor) ? valor : null;
}

/** The job leaves carrying its claim (back, it continues it). */
export function levarReivindicacao(message: ConsumeMessage, token: string): void {
  message.properties.headers = { ...(message.properties.headers ?? {}), [CABECALHO_REIVINDICACAO]: token };
}

/** Origins of destination URLs already parsed: as many as a worker's subscriptions usually point at. */
const ORIGENS_CONHECIDAS = 10_000;
const origens = new Map<string, string>();

/**
 * A job's URL that does not parse matches no destination: its attempt fails on its own and is
 * recorded. Each URL string is parsed once (twice per job otherwise: the job's and the claim's),
 * then the kept origins are forgotten together past ORIGENS_CONHECIDAS.
 */
export function origemDoTrabalho(url: string): string {
  let origem = origens.get(url);
  if (origem === undefined) {
    origem = URL.canParse(url) ? origemDaUrl(url) : 'invalida';
    if (origens.size >= ORIGENS_CONHECIDAS) origens.clear();
    origens.set(url, origem);
  }
  return origem;
}

/**
 * The fields every log line about a job starts with: its delivery and the request id of the
 * publication that caused it. Passed by hand rather than by an AsyncLocalStorage around the job:
 * on Node 20 an AsyncLocalStorage in use turns on promise hooks for every promise of the process
 * (docs/decisions/delivery-worker-cpu.md).
 */
export const doTrabalho = (t: TrabalhoDeEntrega) =>
  t.request_id ? { request_id: t.request_id, entrega_id: t.entrega_id } : { entrega_id: t.entrega_id };

/** The claim a job holds on its delivery, from its claim until its attempt is recorded. */
export interface Posse {
  token?: string;
  /** The destination circuit's probe this job holds (half-open), until its result is recorded. */
  sonda?: { origem: string; token: string };
  /**
   * The job came from its isolated destination's own queue, consumed with the destination's share as
   * prefetch: each job holds a slot there until it is acked, so its record does not wait for
   * DELIVERY_RECORD_SPACING (waiting, a share of 10 went 10 deliveries a second at most with a spacing
   * of 1s, and the sweeper's copies of the jobs waiting behind them filled the queue faster).
   */
  doDestino?: boolean;
}

/**
 * The job as it came (body unchanged), message id = delivery id, mandatory and confirmed, with the
 * trace context it came with.
 */
export function republicar(
  recursos: Pick<Recursos, 'broker'>,
  exchange: string,
  routingKey: string,
  message: ConsumeMessage,
  extra: { headers?: Record<string, unknown>; expiration?: string },
): Promise<void> {
  const headers = comRastro(extra.headers, rastroDe(message.properties.headers));
  return recursos.broker.publish(exchange, routingKey, message.content, {
    messageId: decode(trabalhoDeEntrega, message).entrega_id,
    contentType: 'application/json',
    mandatory: true,
    ...extra,
    ...(headers ? { headers } : {}),
  });
}

/**
 * The job into the retry ladder's step `passoMs` (`hub.atraso`), whose TTL sends it back to the
 * shared work queue; `extra` as for `republicar`.
 */
export function paraAEscada(
  recursos: Pick<Recursos, 'broker' | 'topologia'>,
  passoMs: number,
  message: ConsumeMessage,
  extra: { headers?: Record<string, unknown>; expiration?: string } = {},
): Promise<void> {
  const rota = retryRoute(passoMs, recursos.topologia.filaDeEntregas);
  return republicar(recursos, rota.exchange, rota.routingKey, message, {
    ...extra,
    headers: { ...extra.headers, ...rota.headers },
  });
}
