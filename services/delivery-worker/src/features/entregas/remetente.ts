import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { Ambiente } from '@hub/config';
import { type Cidr, createSafeLookup, isForbiddenAddress, origemDaUrl } from '@hub/destinations';
import type { WebhookHeaders } from '@hub/signing';
import { iniciarTrecho, type Rastro, rastreamentoLigado, SpanKind } from '@hub/tracing';
import { type Dispatcher, Pool } from 'undici';
import { cabecalhosDoPedido, corta, type Destino, Envio, MAX_ERRO, type ResultadoDoEnvio } from './http-exchange';

export { MAX_ERRO, MAX_RESPOSTA, type ResultadoDoEnvio } from './http-exchange';
export { lerRetryAfter } from './retry-after';

export interface OpcoesDoRemetente {
  timeoutMs: number;
  ambiente: Ambiente;
  allowlist: readonly Cidr[];
  /** Connections kept per origin (the per-destination limit). */
  socketsPorOrigem: number;
  /** Name resolution of the connections; dns.lookup unless given (tests). */
  lookup?: typeof dnsLookup;
  /** Told the address a host name resolved to when it is refused: for the log, never the attempt. */
  aoRecusar?: (host: string, endereco: string) => void;
  /** Pools kept before the idle ones are closed; POOLS_MAXIMOS unless given (tests). */
  poolsMaximos?: number;
}

/** Destination URLs whose parsing is kept: as many as a worker's subscriptions usually point at. */
const DESTINOS_CONHECIDOS = 10_000;
/**
 * Pools (origins) kept open at most, as many: past it the idle ones are closed (Remetente.poolDe).
 * A subscriber that registers a URL per host of a wildcard domain would otherwise leave a Pool (and
 * its clients) per host for ever, as node's Agents were before.
 */
const POOLS_MAXIMOS = 10_000;

/**
 * POSTs deliveries with undici: a Pool of kept-alive connections per origin (at most
 * `socketsPorOrigem`), each POST handed to it with `dispatch` and a handler (Envio), redirects never
 * followed (a 3xx is a failure), the whole exchange bounded by one timer, at most 64 KiB of the
 * answer read (then the connection is dropped, so an endless answer costs nothing more). Outside
 * LOCALHOST the address really connected is checked (`createSafeLookup` as every connection's
 * lookup, and literal addresses before connecting). When tracing records, each POST is a CLIENT
 * span of its own, whose context the subscriber gets (docs/decisions/delivery-worker-http-client.md).
 */
export class Remetente {
  private readonly pools = new Map<string, Pool>();
  private readonly destinos = new Map<string, Destino | string>();
  /** The POSTs under way, for `cortar`: a set, not a listener per POST on an AbortSignal. */
  private readonly emCurso = new Set<Envio>();
  private readonly seguro: boolean;
  private readonly lookup;

  constructor(private readonly opcoes: OpcoesDoRemetente) {
    this.seguro = opcoes.ambiente !== 'LOCALHOST';
    this.lookup = this.seguro ? createSafeLookup(opcoes.allowlist, opcoes.lookup, opcoes.aoRecusar) : opcoes.lookup;
  }

  private poolDe(url: URL): Pool {
    const origem = origemDaUrl(url);
    let pool = this.pools.get(origem);
    if (!pool) {
      if (this.pools.size >= (this.opcoes.poolsMaximos ?? POOLS_MAXIMOS)) this.fecharOciosos();
      pool = new Pool(origem, {
        connections: this.opcoes.socketsPorOrigem,
        // One timer bounds the whole exchange (Envio). undici's headers and body timeouts would only
        // add work per POST and per piece of an answer; its connect timeout stays, as long as the
        // exchange's, so a connection the timer gave up on is not tried for ever.
        headersTimeout: 0,
        bodyTimeout: 0,
        connectTimeout: this.opcoes.timeoutMs,
        // undici's connector passes what it does not know to net.connect and tls.connect, which
        // resolve a host name with this lookup: the safe one checks every address connected.
        ...(this.lookup ? { connect: { lookup: this.lookup as LookupDoConector } } : {}),
      });
      this.pools.set(origem, pool);
    }
    return pool;
  }

  /**
   * Closes the pools with nothing queued or under way (their idle connections go with them) and
   * forgets the destinations, which hold their pools. The busy ones stay; an origin whose pool was
   * closed gets a new one at its next POST. Only when POOLS_MAXIMOS origins are open, so not in the
   * way of the usual POST.
   */
  private fecharOciosos(): void {
    for (const [origem, pool] of this.pools) {
      if (pool.stats.size > 0) continue;
      this.pools.delete(origem);
      pool.close().catch(() => undefined);
    }
    this.destinos.clear();
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
    const https = url.protocol === 'https:';
    if (url.protocol !== 'http:' && !https) resultado = `url_de_destino must use http or https, not ${url.protocol}`;
    else if (this.seguro && isIP(host) && isForbiddenAddress(host, this.opcoes.allowlist))
      resultado = `destino_proibido: deliveries may not go to ${host} (internal or reserved)`;
    else {
      const autorizacao = autorizacaoDe(url);
      const caminho = url.pathname + url.search;
      resultado =
        autorizacao === null
          ? 'url_de_destino has a user or password that is not valid percent-encoding'
          : {
              url,
              host,
              pool: this.poolDe(url),
              caminho,
              autorizacao,
              urlSemCredenciais: `${url.protocol}//${url.host}${caminho}`,
              porta: url.port ? Number(url.port) : https ? 443 : 80,
            };
    }
    if (this.destinos.size >= DESTINOS_CONHECIDOS) this.destinos.clear();
    this.destinos.set(destino, resultado);
    return resultado;
  }

  /**
   * Sends one attempt of `corpo` (the bytes signed). Never throws: every failure is a result (the
   * attempt is recorded). `rastro`: the trace context the subscriber gets; when tracing records, the
   * POST's own client span (a child of the active span, the attempt's) is sent in its place.
   * `tipoDoConteudo`: the Content-Type (application/cloudevents+json for a CloudEvents delivery).
   */
  enviar(
    destino: string,
    corpo: Buffer,
    assinatura: WebhookHeaders,
    rastro?: Rastro,
    tipoDoConteudo = 'application/json',
  ): Promise<ResultadoDoEnvio> {
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
    // No instrumentation sees undici's requests: the POST's client span is begun here, when recording.
    const trecho = rastreamentoLigado()
      ? iniciarTrecho('POST', {
          tipo: SpanKind.CLIENT,
          herdarAtivo: true,
          pai: rastro,
          atributos: {
            'http.request.method': 'POST',
            'url.full': alvo.urlSemCredenciais,
            'server.address': alvo.host,
            'server.port': alvo.porta,
          },
        })
      : undefined;
    const opcoes: Dispatcher.DispatchOptions = {
      path: alvo.caminho,
      method: 'POST',
      headers: cabecalhosDoPedido(
        corpo,
        assinatura,
        alvo.autorizacao,
        trecho ? (trecho.rastro ?? rastro) : rastro,
        tipoDoConteudo,
      ),
      body: corpo,
    };
    return new Promise<ResultadoDoEnvio>((resolve) => {
      const envio = new Envio(this.emCurso, alvo, iniciadaEm, inicio, this.opcoes.timeoutMs, resolve, trecho);
      // A request undici refuses (a closed pool, a header it will not send) comes to envio.onError.
      alvo.pool.dispatch(opcoes, envio);
    });
  }

  /** Cuts every POST under way now (the worker's stop, once its deadline passed): each ends as aborted. */
  cortar(): void {
    for (const envio of [...this.emCurso]) envio.abortar();
  }

  /** Closes every pool: its connections are destroyed, whatever is still under way on them fails. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    this.destinos.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }
}

/** The lookup net.connect takes (the connector's option), which dns.lookup's overloads do not match as typed. */
type LookupDoConector = (
  hostname: string,
  options: object,
  callback: (erro: NodeJS.ErrnoException | null, endereco: string | LookupAddress[], familia?: number) => void,
) => void;

/**
 * `Basic …` of the URL's user and password, as node:http's `auth` (urlToHttpOptions) sent it;
 * undefined without them; null when they are not valid percent-encoding (node:http threw there).
 */
function autorizacaoDe(url: URL): string | undefined | null {
  if (!url.username && !url.password) return undefined;
  try {
    const auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    return `Basic ${Buffer.from(auth).toString('base64')}`;
  } catch {
    return null;
  }
}
