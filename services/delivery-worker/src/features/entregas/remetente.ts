import type { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import type { Ambiente } from '@hub/config';
import { type Cidr, createSafeLookup, isForbiddenAddress, origemDaUrl } from '@hub/destinations';
import type { WebhookHeaders } from '@hub/signing';
import type { Rastro } from '@hub/tracing';

/** At most this much of an answer is read and kept on the attempt (architecture §5). */
export const MAX_RESPOSTA = 64 * 1024;
/** Longest `erro` of an attempt (the column's check). */
export const MAX_ERRO = 2000;

export interface ResultadoDoEnvio {
  iniciadaEm: Date;
  duracaoMs: number;
  /** null when no answer came (timeout, refused connection, unsafe destination). */
  statusHttp: number | null;
  sucesso: boolean;
  /** The answer's first 64 KiB as text, NUL removed (text cannot hold it). */
  resposta: string | null;
  erro: string | null;
  /** Retry-After of a 429 or 503, in milliseconds. */
  retryAfterMs?: number;
}

export interface OpcoesDoRemetente {
  timeoutMs: number;
  ambiente: Ambiente;
  allowlist: readonly Cidr[];
  /** Sockets kept per origin (the per-destination limit). */
  socketsPorOrigem: number;
  /** Name resolution of the connections; dns.lookup unless given (tests). */
  lookup?: typeof dnsLookup;
  /** Told the address a host name resolved to when it is refused: for the log, never the attempt. */
  aoRecusar?: (host: string, endereco: string) => void;
}

const corta = (texto: string, max: number) => (texto.length > max ? `${texto.slice(0, max - 1)}…` : texto);

/**
 * POSTs deliveries with node:http(s): one keep-alive pool per origin, redirects never followed (a
 * 3xx is a failure), the whole exchange bounded by the timeout, at most 64 KiB of the answer read
 * (then the connection is dropped, so an endless answer costs nothing more). Outside LOCALHOST the
 * address really connected is checked (`createSafeLookup`, and literal addresses before connecting).
 */
/** A destination URL as its attempts use it (Remetente.destinoDe). */
interface Destino {
  url: URL;
  host: string;
  modulo: typeof http | typeof https;
  /** Its URL's parts as a request takes them (node's urlToHttpOptions), worked out once. */
  partes: Pick<http.RequestOptions, 'protocol' | 'hostname' | 'port' | 'path' | 'auth'>;
  agente: http.Agent;
}

const AGENTE_DO_USUARIO = 'event-hub-delivery-worker';

/**
 * The headers of one POST, written out field by field: a literal that spread the signature's and the
 * trace's headers took about 4 µs per POST on Node 20 (the worker's own code's largest single cost),
 * field by field about 0.02 µs (docs/decisions.md "The delivery worker's CPU per delivery").
 */
function cabecalhosDoPedido(corpo: Buffer, assinatura: WebhookHeaders, rastro?: Rastro): http.OutgoingHttpHeaders {
  const cabecalhos: http.OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'content-length': String(corpo.length),
    'user-agent': AGENTE_DO_USUARIO,
    'webhook-id': assinatura['webhook-id'],
    'webhook-timestamp': assinatura['webhook-timestamp'],
    'webhook-signature': assinatura['webhook-signature'],
    'webhook-key-id': assinatura['webhook-key-id'],
  };
  if (rastro) for (const chave of Object.keys(rastro)) cabecalhos[chave] = rastro[chave];
  return cabecalhos;
}

/** Destination URLs whose parsing is kept: as many as a worker's subscriptions usually point at. */
const DESTINOS_CONHECIDOS = 10_000;

export class Remetente {
  private readonly agentes = new Map<string, http.Agent>();
  private readonly destinos = new Map<string, Destino | string>();
  /** How to cut each POST under way (`cortar`): a set, not a listener per POST on an AbortSignal. */
  private readonly emCurso = new Set<() => void>();
  private readonly seguro: boolean;
  private readonly lookup;

  constructor(private readonly opcoes: OpcoesDoRemetente) {
    this.seguro = opcoes.ambiente !== 'LOCALHOST';
    this.lookup = this.seguro ? createSafeLookup(opcoes.allowlist, opcoes.lookup, opcoes.aoRecusar) : opcoes.lookup;
  }

  private agenteDe(url: URL): http.Agent {
    const origem = origemDaUrl(url);
    let agente = this.agentes.get(origem);
    if (!agente) {
      const opcoes: http.AgentOptions = {
        keepAlive: true,
        maxSockets: this.opcoes.socketsPorOrigem,
        maxFreeSockets: this.opcoes.socketsPorOrigem,
        scheduling: 'lifo',
        ...(this.lookup ? { lookup: this.lookup } : {}),
      };
      agente = url.protocol === 'https:' ? new https.Agent(opcoes) : new http.Agent(opcoes);
      this.agentes.set(origem, agente);
    }
    return agente;
  }

  /**
   * What a destination URL gives every attempt to it, worked out once: its parsed URL and host, its
   * pool, or why it is refused. At most DESTINOS_CONHECIDOS are kept (then forgotten together).
   */
  private destinoDe(destino: string): Destino | string {
    const conhecido = this.destinos.get(destino);
    if (conhecido !== undefined) return conhecido;
    let url: URL;
    try {
      url = new URL(destino);
    } catch {
      return 'url_de_destino is not a valid URL';
    }
    let resultado: Destino | string;
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      resultado = `url_de_destino must use http or https, not ${url.protocol}`;
    else if (this.seguro && isIP(host) && isForbiddenAddress(host, this.opcoes.allowlist))
      resultado = `destino_proibido: deliveries may not go to ${host} (internal or reserved)`;
    else {
      const { protocol, hostname, port, path, auth } = urlToHttpOptions(url);
      resultado = {
        url,
        host,
        modulo: url.protocol === 'https:' ? https : http,
        partes: { protocol, hostname, port, path, auth },
        agente: this.agenteDe(url),
      };
    }
    if (this.destinos.size >= DESTINOS_CONHECIDOS) this.destinos.clear();
    this.destinos.set(destino, resultado);
    return resultado;
  }

  /**
   * Sends one attempt of `corpo` (the bytes signed). Never throws: every failure is a result (the
   * attempt is recorded). `rastro`: the trace context the subscriber gets (the HTTP instrumentation,
   * when it records, puts its own span's in its place).
   */
  enviar(destino: string, corpo: Buffer, assinatura: WebhookHeaders, rastro?: Rastro): Promise<ResultadoDoEnvio> {
    const iniciadaEm = new Date();
    const inicio = performance.now();
    const alvo = this.destinoDe(destino);
    if (typeof alvo === 'string')
      return Promise.resolve({
        iniciadaEm,
        duracaoMs: Math.round(performance.now() - inicio),
        statusHttp: null,
        sucesso: false,
        resposta: null,
        erro: corta(alvo, MAX_ERRO),
      });
    const { url, host } = alvo;

    return new Promise<ResultadoDoEnvio>((resolve) => {
      let terminou = false;
      let status: number | null = null;
      let retryAfterMs: number | undefined;
      let localizacao: string | undefined;
      let pedacos: Buffer[] | undefined;
      let lidos = 0;
      const resposta = () => {
        if (status === null) return null;
        if (pedacos === undefined) return '';
        const texto = (pedacos.length === 1 ? pedacos[0]! : Buffer.concat(pedacos))
          .subarray(0, MAX_RESPOSTA)
          .toString('utf8');
        return texto.includes('\u0000') ? texto.replaceAll('\u0000', '') : texto;
      };
      const concluir = (erro: string | null) => {
        if (terminou) return;
        terminou = true;
        clearTimeout(relogio);
        this.emCurso.delete(abortar);
        const sucesso = erro === null && status !== null && status >= 200 && status < 300;
        const resultado: ResultadoDoEnvio = {
          iniciadaEm,
          duracaoMs: Math.round(performance.now() - inicio),
          statusHttp: status,
          sucesso,
          resposta: resposta(),
          erro: sucesso ? null : corta(erro ?? `HTTP ${status}`, MAX_ERRO),
        };
        if (retryAfterMs !== undefined) resultado.retryAfterMs = retryAfterMs;
        resolve(resultado);
      };
      const { partes } = alvo;
      const pedido = alvo.modulo.request({
        protocol: partes.protocol,
        hostname: partes.hostname,
        port: partes.port,
        path: partes.path,
        auth: partes.auth,
        method: 'POST',
        agent: alvo.agente,
        headers: cabecalhosDoPedido(corpo, assinatura, rastro),
      });
      const relogio = setTimeout(() => {
        // A status already received decides; only the rest of the answer is given up.
        if (status !== null) fimComStatus();
        else concluir(`timeout: no answer within ${this.opcoes.timeoutMs} ms`);
        pedido.destroy();
      }, this.opcoes.timeoutMs);
      const abortar = () => {
        concluir('aborted: the worker is stopping');
        pedido.destroy();
      };
      this.emCurso.add(abortar);
      pedido.on('response', (res) => {
        status = res.statusCode ?? null;
        if (status === 429 || status === 503) retryAfterMs = lerRetryAfter(res.headers['retry-after']);
        localizacao = res.headers.location;
        res.on('data', (pedaco: Buffer) => {
          if (terminou) return;
          if (lidos < MAX_RESPOSTA) {
            pedacos ??= [];
            pedacos.push(pedaco);
          }
          lidos += pedaco.length;
          if (lidos >= MAX_RESPOSTA) {
            // Enough: the rest of the answer is not read (an endless answer must not hold the worker).
            fimComStatus();
            res.destroy();
            pedido.destroy();
          }
        });
        res.on('end', fimComStatus);
        res.on('error', fimComStatus);
        res.on('aborted', fimComStatus);
      });
      const fimComStatus = () => {
        if (status !== null && status >= 300 && status < 400)
          concluir(`redirect (HTTP ${status}${localizacao ? ` to ${localizacao}` : ''}) not followed`);
        else concluir(status !== null && status >= 200 && status < 300 ? null : `HTTP ${status}`);
      };
      pedido.on('error', (error: NodeJS.ErrnoException) => {
        if (status !== null) return fimComStatus();
        const codigo = error.code === 'EDESTINOPROIBIDO' ? 'destino_proibido' : (error.code ?? 'error');
        // "connect ECONNREFUSED 10.1.2.3:443" names what the host resolved to: the attempt names the host.
        const endereco = (error as { address?: string }).address;
        const texto = endereco && endereco !== host ? error.message.replaceAll(endereco, url.hostname) : error.message;
        concluir(`${codigo}: ${texto}`);
      });
      pedido.end(corpo);
    });
  }

  /** Cuts every POST under way now (the worker's stop, once its deadline passed): each ends as aborted. */
  cortar(): void {
    for (const abortar of [...this.emCurso]) abortar();
  }

  /** Closes every pool. */
  close(): void {
    for (const agente of this.agentes.values()) agente.destroy();
    this.agentes.clear();
    this.destinos.clear();
  }
}

const DIA = '(Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MES = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const HORA = '\\d{2}:\\d{2}:\\d{2}';
/** The three forms of HTTP-date a recipient reads (RFC 9110 §5.6.7): IMF-fixdate, RFC 850, asctime. */
const DATA_HTTP = [
  new RegExp(`^${DIA}, \\d{2} ${MES} \\d{4} ${HORA} GMT$`),
  new RegExp(`^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MES}-\\d{2} ${HORA} GMT$`),
];
/** asctime has no zone: it is GMT too, said to Date.parse (which would read it as local time). */
const ASCTIME = new RegExp(`^${DIA} ${MES} ( \\d|\\d{2}) ${HORA} \\d{4}$`);

/**
 * Retry-After (RFC 9110 §10.2.3) in milliseconds: delay-seconds (digits only) or an HTTP-date, the
 * white space around the value aside. Anything else (`-1`, `1.5`, `1e3`, an ISO date, garbage,
 * empty) is undefined, as if absent, and the normal backoff applies: Date.parse alone read `-1` and
 * `1.5` as dates in 2001, already past, so no wait at all.
 */
export function lerRetryAfter(valor: string | undefined, agora = Date.now()): number | undefined {
  if (!valor) return undefined;
  const texto = valor.trim();
  if (/^\d+$/.test(texto)) return Number(texto) * 1000;
  let data: string | undefined;
  if (DATA_HTTP.some((forma) => forma.test(texto))) data = texto;
  else if (ASCTIME.test(texto)) data = `${texto} GMT`;
  if (data === undefined) return undefined;
  const quando = Date.parse(data);
  return Number.isNaN(quando) ? undefined : Math.max(0, quando - agora);
}
