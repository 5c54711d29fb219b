/**
 * The subscription a verified body names. The hub's own body (standard-webhooks) says it in
 * `assinatura_id`; a CloudEvents 1.0 body (structured mode, `specversion` "1.0") in its extension
 * attribute `assinaturaid` (CloudEvents attribute names are lower-case letters and digits only).
 */
export function assinaturaNomeada(payload: unknown): unknown {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const corpo = payload as { assinatura_id?: unknown; assinaturaid?: unknown; specversion?: unknown };
  return corpo.specversion === '1.0' && corpo.assinatura_id === undefined ? corpo.assinaturaid : corpo.assinatura_id;
}

/** A delivery body in CloudEvents form (what the verifier returns for a `cloudevents` subscription). */
export interface EntregaCloudEvents<T = unknown> {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  dataschema: string;
  datacontenttype: 'application/json';
  assinaturaid: string;
  /** Ordered subscriptions only: the delivery's place among its entity's, as a string. */
  sequence?: string;
  data: T;
}
