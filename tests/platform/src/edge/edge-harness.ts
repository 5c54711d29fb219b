import { upstreamOf } from '@hub/gateway';
import type { Sistema } from './differential';
import type { Borda } from './nginx';
import type { Recorders } from './gateway-harness';
import type { Gravador } from './recorder';

/**
 * A path as nginx matches it against its locations: %XX decoded, slashes merged, `.` and `..`
 * resolved. nginx then sends the request's target on as the client wrote it.
 */
export function comoONginxLe(caminho: string): string {
  const decodificado = caminho.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
  const saida: string[] = [];
  for (const segmento of decodificado.replace(/\/+/g, '/').split('/').slice(1)) {
    if (segmento === '.') continue;
    if (segmento === '..') saida.pop();
    else saida.push(segmento);
  }
  return `/${saida.join('/')}`;
}

/** Where infra/edge/nginx.conf sends a path: /eventos to hub-api, the rest to the gateway, which routes it as it came. */
export const rotearNaBorda = (caminho: string) =>
  comoONginxLe(caminho) === '/eventos' ? 'hub-api' : upstreamOf(caminho);

/** nginx (TLS, HTTP/1.1) in front of the gateway and hub-api's recorder, as a system under test. */
export const sistemaDaBorda = (
  borda: Borda,
  gravadores: Recorders,
  tokens: Sistema['tokens'],
  leniente: Gravador,
): Sistema => ({
  alvo: { host: '127.0.0.1', port: borda.port, tls: { ca: borda.ca, servername: 'localhost' } },
  gravadores: gravadores.todos,
  tokens,
  rotear: rotearNaBorda,
  prazoMs: 4_000,
  leniente,
});
