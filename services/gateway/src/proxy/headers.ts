import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { REQUEST_ID_HEADER } from '@hub/http';
import { rastroDeSaida, TRACEPARENT, TRACESTATE } from '@hub/tracing';

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1), and the framing: never
 * passed on, in either direction. node:http parsed the client's framing; undici writes the one the
 * service gets, and node:http the one the client gets. `expect` is here too: Node already answered
 * "100 Continue" to the client.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'http2-settings',
]);

/**
 * What a Connection header may not take away: the message's framing, its Host, and the credentials
 * the gateway counted the request by (the service must see the caller the gateway saw).
 */
const NEVER_NAMED = new Set(['content-length', 'transfer-encoding', 'host', 'authorization']);

/** The headers the gateway writes itself on the way to a service: a client's are dropped. */
const GATEWAY_WRITES = new Set([
  REQUEST_ID_HEADER,
  'content-length',
  'host',
  'x-forwarded-for',
  'x-forwarded-port',
  'x-forwarded-proto',
  'x-forwarded-host',
  'forwarded',
  TRACEPARENT,
  TRACESTATE,
]);

/** The header names a message's Connection header lists (hop-by-hop by the sender's word), lower case. */
function namedByConnection(connection: string | string[] | undefined): Set<string> {
  const names = new Set<string>();
  const values = Array.isArray(connection) ? connection : connection === undefined ? [] : [connection];
  for (const value of values)
    for (const token of value.split(',')) {
      const name = token.trim().toLowerCase();
      if (name && !NEVER_NAMED.has(name)) names.add(name);
    }
  return names;
}

/** Who sent the request to the gateway, as it forwards it. */
export interface Forwarding {
  /** The client's address (the TCP peer). */
  remoteAddress: string | undefined;
  /** The peer is a proxy trusted by GATEWAY_TRUST_PROXY: its X-Forwarded-* are extended, not replaced. */
  trusted: boolean;
}

/**
 * The request's headers as the service gets them: hop-by-hop headers, those the client's Connection
 * names (never Content-Length, Transfer-Encoding, Host or Authorization) and those the gateway writes itself dropped;
 * then the request id the gateway settled on, X-Forwarded-For/-Port/-Proto/-Host (the client's Host
 * goes there: undici sends the instance's own, as a TLS instance is asked for by its name; the
 * client's X-Forwarded-* only when it is a trusted proxy), the trace
 * context (docs/decisions/tracing.md) and, for a body that streams, its length
 * as node:http counted it. A body read whole gets its length from undici.
 */
export function requestHeadersFor(
  req: IncomingMessage,
  requestId: string,
  forwarding: Forwarding,
  streamedLength: number | undefined,
): Record<string, string | string[]> {
  const incoming = req.headers;
  const named = namedByConnection(incoming.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP_BY_HOP.has(name) || GATEWAY_WRITES.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  const host = incoming.host ?? '';
  out[REQUEST_ID_HEADER] = requestId;
  const remote = forwarding.remoteAddress ?? '';
  const client = forwarding.trusted ? incoming : ({} as IncomingHttpHeaders);
  out['x-forwarded-for'] = appended(client['x-forwarded-for'], remote);
  out['x-forwarded-port'] = first(client['x-forwarded-port']) ?? portOf(host);
  out['x-forwarded-proto'] = first(client['x-forwarded-proto']) ?? 'http';
  out['x-forwarded-host'] = first(client['x-forwarded-host']) ?? host;
  const trace = rastroDeSaida({ traceparent: first(incoming[TRACEPARENT]), tracestate: first(incoming[TRACESTATE]) });
  Object.assign(out, trace);
  if (streamedLength !== undefined) out['content-length'] = String(streamedLength);
  return out;
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

function appended(list: string | string[] | undefined, value: string): string {
  const before = Array.isArray(list) ? list.join(', ') : list;
  return before ? `${before}, ${value}` : value;
}

/** The port a client addressed (its Host header's, or 80: the gateway speaks plain HTTP). */
function portOf(host: string): string {
  return /:(\d+)$/.exec(host)?.[1] ?? '80';
}

/** The gateway's own answer headers a service may set itself (it is obeyed); Vary is merged instead. */
const VARY = 'vary';

/**
 * The service's answer headers (as undici parsed them: lower-case names, repeated ones as arrays)
 * for the client, hop-by-hop ones and those its Connection names dropped, over the headers the
 * gateway already set on the answer (`current`): a service's own value wins, Vary lists both.
 */
export function answerHeadersFor(
  upstream: Record<string, string | string[] | undefined>,
  current: OutgoingHttpHeaders,
): Record<string, string | string[]> {
  const named = namedByConnection(upstream.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    const before = name === VARY ? current[VARY] : undefined;
    out[name] = before === undefined ? value : `${value}, ${String(before)}`;
  }
  return out;
}
