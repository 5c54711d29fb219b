import type { IncomingMessage, ServerResponse } from 'node:http';
import { REQUEST_ID_HEADER } from '@hub/http';
import { rastroDeSaida, TRACEPARENT, TRACESTATE } from '@hub/tracing';

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1): never passed on, in
 * either direction. Each side's Node sets its own framing and keep-alive. `expect` is here too: Node
 * already answered "100 Continue" to the client, and asking the service again only delays it.
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
]);

/** Header names listed in Connection headers (hop-by-hop too, by the sender's word), lower case. */
function namedByConnection(values: string | undefined): Set<string> | undefined {
  // What every Node peer sends: names nothing beyond the connection's own options.
  if (values === undefined || values === 'keep-alive' || values === 'close') return undefined;
  const names = new Set<string>();
  for (const token of values.split(',')) {
    const name = token.trim().toLowerCase();
    if (name) names.add(name);
  }
  return names;
}

/**
 * The request's headers as the service gets them, a flat [name, value, …] list built from the raw
 * ones (names keep their case, repeated headers stay repeated): hop-by-hop headers dropped, the
 * request id the gateway settled on, X-Forwarded-For/-Port/-Proto/-Host saying who called, and the
 * trace context (the caller's `traceparent` as it came, or the gateway's span when tracing records,
 * or a new trace: docs/decisions/tracing.md). A body the gateway read whole
 * (`bodyLength`) goes with its own Content-Length.
 */
export function requestHeadersFor(req: IncomingMessage, requestId: string, bodyLength?: number): string[] {
  return requestHeadersFrom(req.rawHeaders, req.socket.remoteAddress, requestId, bodyLength);
}

/** requestHeadersFor from a request's raw headers and its client's address (the raw front reads no IncomingMessage). */
export function requestHeadersFrom(
  raw: readonly string[],
  remoteAddress: string | undefined,
  requestId: string,
  bodyLength?: number,
): string[] {
  const out: string[] = [];
  let connection: string | undefined;
  let forwardedFor: string | undefined;
  let forwardedPort: string | undefined;
  let forwardedProto: string | undefined;
  let forwardedHost: string | undefined;
  let host: string | undefined;
  let traceparent: string | undefined;
  let tracestate: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    switch (lower) {
      case 'connection':
        connection = append(connection, value);
        continue;
      case REQUEST_ID_HEADER:
        continue;
      case 'content-length':
        if (bodyLength !== undefined) continue;
        break;
      case 'x-forwarded-for':
        forwardedFor = forwardedFor === undefined ? value : `${forwardedFor},${value}`;
        continue;
      case 'x-forwarded-port':
        forwardedPort = forwardedPort === undefined ? value : `${forwardedPort},${value}`;
        continue;
      case 'x-forwarded-proto':
        forwardedProto = forwardedProto === undefined ? value : `${forwardedProto},${value}`;
        continue;
      case 'x-forwarded-host':
        forwardedHost ??= value;
        continue;
      case 'host':
        // One Host: Node takes a request with two (and reads the first), undici refuses to send it.
        if (host !== undefined) continue;
        host = value;
        break;
      case TRACEPARENT:
        traceparent ??= value;
        continue;
      case TRACESTATE:
        tracestate ??= value;
        continue;
      default:
        if (HOP_BY_HOP.has(lower)) continue;
    }
    out.push(name, value);
  }
  const listed = namedByConnection(connection);
  const kept = listed ? dropNamed(out, listed) : out;
  kept.push(
    REQUEST_ID_HEADER,
    requestId,
    'x-forwarded-for',
    append(forwardedFor, remoteAddress ?? ''),
    'x-forwarded-port',
    append(forwardedPort, portOf(host)),
    'x-forwarded-proto',
    append(forwardedProto, 'http'),
    'x-forwarded-host',
    forwardedHost ?? host ?? '',
  );
  for (const [name, value] of Object.entries(rastroDeSaida({ traceparent, tracestate }))) kept.push(name, value);
  if (bodyLength !== undefined) kept.push('content-length', String(bodyLength));
  return kept;
}

const append = (list: string | undefined, value: string) => (list === undefined ? value : `${list},${value}`);

/** The port a client addressed (its Host header's, or 80: the gateway speaks plain HTTP). */
function portOf(host: string | undefined): string {
  const match = host ? /:(\d+)$/.exec(host) : null;
  return match?.[1] ?? '80';
}

/** The list without the [name, value] pairs whose name is in `names` (lower case). */
function dropNamed(pairs: string[], names: Set<string>): string[] {
  const kept: string[] = [];
  for (let i = 0; i < pairs.length; i += 2)
    if (!names.has(pairs[i]!.toLowerCase())) kept.push(pairs[i]!, pairs[i + 1]!);
  return kept;
}

/**
 * Headers the gateway adds to an answer (request id, security, CORS, rate limit), as a flat
 * [lower-case name, value, …] list. A service that sets one of them itself is obeyed.
 */
export type GatewayHeaders = string[];

/**
 * undici's raw answer headers ([name, value, …] as bytes) as text, read once, byte for byte (latin1,
 * as node:http reads a message's headers and writes them back).
 */
export function headerText(raw: readonly Buffer[]): string[] {
  const out = new Array<string>(raw.length);
  for (let i = 0; i < raw.length; i += 1) out[i] = raw[i]!.toString('latin1');
  return out;
}

/**
 * Starts the client's answer with the service's status and headers (`raw`: a flat [name, value, …]
 * list as the service sent them; hop-by-hop ones dropped) and the gateway's own, in one `writeHead`.
 * With `gateway` undefined the gateway's headers were already set on `res` (the express path); the
 * service's are set over them, a repeated one as repeated lines.
 */
export function writeUpstreamHead(
  res: ServerResponse,
  status: number,
  message: string,
  raw: readonly string[],
  gateway: GatewayHeaders | undefined,
): void {
  if (gateway === undefined) {
    const listed = listedByConnection(raw);
    let set: Set<string> | undefined;
    for (let i = 0; i < raw.length; i += 2) {
      const lower = raw[i]!.toLowerCase();
      if (HOP_BY_HOP.has(lower) || listed?.has(lower)) continue;
      const value = raw[i + 1]!;
      if (set?.has(lower)) {
        const before = res.getHeader(lower)!;
        res.setHeader(lower, Array.isArray(before) ? [...before, value] : [String(before), value]);
      } else {
        set ??= new Set();
        set.add(lower);
        res.setHeader(lower, value);
      }
    }
    if (message) res.writeHead(status, message);
    else res.writeHead(status);
    return;
  }
  const out = answerHeaders(raw, gateway);
  if (message) res.writeHead(status, message, out);
  else res.writeHead(status, out);
}

/**
 * The client's answer headers on the fast paths, a flat [name, value, …] list: the service's
 * (`raw`), less hop-by-hop ones and those its Connection header lists, then the gateway's
 * (`gateway`) that the service did not set itself.
 */
export function answerHeaders(raw: readonly string[], gateway: GatewayHeaders): string[] {
  const listed = listedByConnection(raw);
  const out: string[] = [];
  let sent: Set<string> | undefined;
  let vary: number | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || listed?.has(lower)) continue;
    if (GATEWAY_NAMES.has(lower)) {
      if (lower === 'vary') vary ??= out.length + 1;
      else {
        sent ??= new Set();
        sent.add(lower);
      }
    }
    out.push(name, raw[i + 1]!);
  }
  for (let i = 0; i < gateway.length; i += 2) {
    const name = gateway[i]!;
    if (sent?.has(name)) continue;
    // Vary lists what chose the answer: the service's reasons and the gateway's (Origin) both hold.
    if (name === 'vary' && vary !== undefined) out[vary] = `${out[vary]}, ${gateway[i + 1]}`;
    else out.push(name, gateway[i + 1]!);
  }
  return out;
}

/** The header names an answer's Connection headers list (hop-by-hop by the service's word), lower case. */
function listedByConnection(raw: readonly string[]): Set<string> | undefined {
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.length === 10 && raw[i]!.toLowerCase() === 'connection') connection = append(connection, raw[i + 1]!);
  return namedByConnection(connection);
}

/** Names the gateway itself may add to an answer (see GatewayHeaders). */
const GATEWAY_NAMES = new Set([
  REQUEST_ID_HEADER,
  'content-security-policy',
  'x-content-type-options',
  'x-frame-options',
  'referrer-policy',
  'strict-transport-security',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'vary',
  'ratelimit-policy',
  'ratelimit',
]);

/** Sets the gateway's headers on `res`, for an answer the gateway writes itself (an error). */
export function setGatewayHeaders(res: ServerResponse, gateway: GatewayHeaders): void {
  for (let i = 0; i < gateway.length; i += 2) res.setHeader(gateway[i]!, gateway[i + 1]!);
}
