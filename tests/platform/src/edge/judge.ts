import type { Saida } from './raw-client';
import { respostas } from './raw-client';
import type { Registro, Resposta } from './recorder';

/** What one case produced: the reference's requests, what reached the services, and the answers. */
export interface Resultado {
  /** The requests the reference (plain node:http) parsed from the case's bytes. */
  referencia: Registro[];
  /** The lenient reference's, for a system that re-frames what it passes on (see Sistema.leniente). */
  leniente?: Registro[];
  /**
   * For a system that re-frames what it passes on: the case's first request line and the clean
   * request after it on the same connection, which it may pass on where the references refused the
   * connection before them (it read on, skipping what it refused), with the case caller's credentials.
   */
  proprios?: { method: string; url: string; authorization: string }[];
  /** Every request the services behind the system under test received, in any order. */
  upstream: Registro[];
  /** The system under test's answers on the case's connection. */
  saida: Saida;
  /** The clean request of another caller on a new connection after the case. */
  limpo: { caminho: string; authorization: string; saida: Saida };
  /** The service a path is routed to (the gateway's table, or the edge's). */
  rotear(caminho: string): string | undefined;
}

/** A request target as origin form: an absolute-form URL's scheme and authority dropped (nothing decoded or resolved). */
export const origem = (url: string) => url.replace(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/, '') || '/';

const caminhoDe = (url: string) => origem(url).split('?')[0]!;

/**
 * Whether a path is /metrics once resolved as a URL parser resolves it (dot segments, %2e included;
 * an encoded slash stays a character of its segment), as the services' routers read it.
 */
const ehMetrics = (caminho: string) => /^\/metrics(\/|$)/i.test(new URL(`http://servico${caminho}`).pathname);

const descrever = (r: Registro) =>
  `${r.servidor} got ${r.method} ${JSON.stringify(r.url)} body ${JSON.stringify(r.corpo.toString('latin1'))} auth ${r.authorization === undefined ? 'none' : 'set'}`;

/** The reference's request a service's request is, if any not taken yet: same method, target, body, credentials, and routed to that service. */
function par(u: Registro, livres: Registro[], rotear: Resultado['rotear']): number {
  return livres.findIndex(
    (r) =>
      r.method === u.method &&
      origem(r.url) === u.url &&
      r.corpo.equals(u.corpo) &&
      r.authorization === u.authorization &&
      rotear(caminhoDe(r.url)) === u.servidor,
  );
}

/**
 * The pass rule of the differential (docs/decisions/edge-proxy.md): every request a service got is
 * one the reference parsed (one to one: method, target, body, credentials, and the service its path
 * is routed to), or, behind a system that re-frames requests, one the lenient reference parsed
 * alike; nothing reaches /metrics; the clean request of the other caller reaches its service
 * once, with its own credentials, and is answered for itself; no answer is 5xx. The failures, in words.
 */
export function julgar(r: Resultado): string[] {
  const falhas: string[] = [];
  const livres = [...r.referencia];
  const lenientes = [...(r.leniente ?? [])];
  let limpos = 0;
  for (const u of r.upstream) {
    if (ehMetrics(caminhoDe(u.url))) falhas.push(`reached /metrics: ${descrever(u)}`);
    if (u.url === r.limpo.caminho) {
      limpos += 1;
      if (u.authorization !== r.limpo.authorization || u.method !== 'GET' || u.corpo.length > 0)
        falhas.push(`the clean request arrived altered: ${descrever(u)}`);
      continue;
    }
    if (u.authorization === r.limpo.authorization)
      falhas.push(`the other caller's credentials on a request it did not send: ${descrever(u)}`);
    const i = par(u, livres, r.rotear);
    if (i !== -1) {
      livres.splice(i, 1);
      continue;
    }
    const j = par(u, lenientes, r.rotear);
    if (j !== -1) {
      lenientes.splice(j, 1);
      continue;
    }
    const k = (r.proprios ?? []).findIndex(
      (p) => p.method === u.method && origem(p.url) === u.url && p.authorization === u.authorization,
    );
    if (k === -1) falhas.push(`a request the reference did not parse: ${descrever(u)}`);
    else r.proprios!.splice(k, 1);
  }
  if (limpos !== 1) falhas.push(`the clean request reached its service ${limpos} times`);
  const proprias = respostas<Resposta>(r.limpo.saida.texto);
  const status = r.limpo.saida.status;
  if (
    status[0] !== 200 ||
    proprias.length !== 1 ||
    proprias[0]!.url !== r.limpo.caminho ||
    proprias[0]!.authorization !== r.limpo.authorization
  )
    falhas.push(`the clean request was not answered for itself: ${JSON.stringify(r.limpo.saida.texto.slice(0, 300))}`);
  for (const s of [...r.saida.status, ...status]) if (s >= 500) falhas.push(`answered ${s}`);
  for (const resposta of respostas<Resposta>(r.saida.texto))
    if (resposta.authorization === r.limpo.authorization)
      falhas.push(`the case's connection read the other caller's answer: ${JSON.stringify(resposta)}`);
  return falhas;
}
