import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { Ambiente } from '@hub/config';
import { type Cidr, createSafeLookup, isForbiddenAddress, origemDaUrl } from '@hub/destinations';
import type { WebhookHeaders } from '@hub/signing';
import { iniciarTrecho, type Rastro, rastreamentoLigado, SpanKind, type Trecho } from '@hub/tracing';
import { type Dispatcher, Pool } from 'undici';

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
  /** Connections kept per origin (the per-destination limit). */
  socketsPorOrigem: number;
  /** Name resolution of the connections; dns.lookup unless given (tests). */
  lookup?: typeof dnsLookup;
  /** Told the address a host name resolved to when it is refused: for the log, never the attempt. */
  aoRecusar?: (host: string, endereco: string) => void;
  /** Pools kept before the idle ones are closed; POOLS_MAXIMOS unless given (tests). */
  poolsMaximos?: number;
}

const corta = (texto: string, max: number) => (texto.length > max ? `${texto.slice(0, max - 1)}…` : texto);

/** A destination URL as its attempts use it (Remetente.destinoDe). */
interface Destino {
  url: URL;
  /** The host name, or the address without brackets. */
  host: string;
  pool: Pool;
  /** The request's target: the URL's path and query (node's urlToHttpOptions `path`). */
  caminho: string;
  /** `Basic …` of the URL's user and password, as node:http sent it from `auth`; undefined without. */
  autorizacao: string | undefined;
  /** The URL as the POST's client span names it: without its user and password. */
  urlSemCredenciais: string;
  porta: number;
}

const AGENTE_DO_USUARIO = 'event-hub-delivery-worker';

/**
 * The headers of one POST as undici's flat array (name, value, …): undici reads an array as it is,
 * where an object's keys are listed first. Written out field by field: a literal that spread the
 * signature's and the trace's headers took about 4 µs per POST on Node 20 (the worker's own code's
 * largest single cost), field by field about 0.02 µs (docs/decisions/delivery-worker-cpu.md). undici adds `host` and `connection: keep-alive`, as node:http did.
 */
function cabecalhosDoPedido(
  corpo: Buffer,
  assinatura: WebhookHeaders,
  autorizacao: string | undefined,
  rastro: Rastro | undefined,
  tipoDoConteudo: string,
): string[] {
  const cabecalhos = [
    'content-type',
    tipoDoConteudo,
    'content-length',
    String(corpo.length),
    'user-agent',
    AGENTE_DO_USUARIO,
    'webhook-id',
    assinatura['webhook-id'],
    'webhook-timestamp',
    assinatura['webhook-timestamp'],
    'webhook-signature',
    assinatura['webhook-signature'],
    'webhook-key-id',
    assinatura['webhook-key-id'],
  ];
  if (autorizacao !== undefined) cabecalhos.push('authorization', autorizacao);
  if (rastro) for (const chave of Object.keys(rastro)) cabecalhos.push(chave, rastro[chave]!);
  return cabecalhos;
}

/**
 * The first value of a header among undici's raw answer headers (name, value, … as they came), as
 * node:http kept the first Retry-After and Location; undefined when absent.
 */
function cabecalhoDaResposta(brutos: Buffer[], nome: string): string | undefined {
  for (let i = 0; i + 1 < brutos.length; i += 2) {
    const n = brutos[i]!;
    if (n.length === nome.length && n.toString('latin1').toLowerCase() === nome)
      return brutos[i + 1]!.toString('latin1');
  }
  return undefined;
}

/**
 * An error before any answer as the attempt's `erro`: `CODE: message`, the host named where the
 * message names the address it resolved to, the safe lookup's refusal as `destino_proibido`.
 */
function textoDoErro(erro: Error, alvo: Destino): string {
  // A host of several addresses, each tried and each failed (net's autoSelectFamily): an
  // AggregateError with no message, only the first one's code; its errors say what happened. (Read
  // by shape: node's AggregateError is not the one of a vm context, jest's.)
  const cada = (erro as { errors?: unknown }).errors;
  if (!erro.message && Array.isArray(cada) && cada.length > 0)
    return `${textoDoErro(cada[0] as Error, alvo)} (the first of its ${cada.length} addresses; each failed)`;
  const { code, address } = erro as NodeJS.ErrnoException & { address?: string };
  if (code === 'EDESTINOPROIBIDO') return `destino_proibido: ${erro.message}`;
  // "connect ECONNREFUSED 10.1.2.3:443" names what the host resolved to: the attempt names the host.
  const texto = address && address !== alvo.host ? erro.message.replaceAll(address, alvo.url.hostname) : erro.message;
  if (code === 'UND_ERR_SOCKET')
    return texto === 'bad response' || texto === 'bad upgrade'
      ? // undici drops an answer it does not take (node:http passed a 100 over): not the subscriber's close.
        `UND_ERR_SOCKET: the answer of ${alvo.url.host} was refused and the connection dropped (${texto}: such as an unrequested 100 Continue or upgrade)`
      : // undici's "other side closed" alone does not say which side or when.
        `UND_ERR_SOCKET: the connection to ${alvo.url.host} ended before an answer (${texto})`;
  // Without a code (undici's HTTPParserError has none), the error's class says more than "error".
  return `${code ?? (erro.name && erro.name !== 'Error' ? erro.name : 'error')}: ${texto}`;
}

/**
 * One POST under way, and undici's handler of it (its callbacks are the methods: undici's older
 * handler interface, whose answer headers come raw, with no per-request wrapper, as the gateway's
 * proxy uses it). The timer and `cortar` find it as an object, with no closure made per POST.
 */
class Envio implements Dispatcher.DispatchHandler {
  private terminou = false;
  private status: number | null = null;
  private retryAfterMs: number | undefined = undefined;
  private localizacao: string | undefined = undefined;
  private pedacos: Buffer[] | undefined = undefined;
  private lidos = 0;
  /** undici's abort of the request, once it is on a connection (before, onConnect aborts it). */
  private abortarPedido: ((erro?: Error) => void) | undefined = undefined;
  private readonly relogio: NodeJS.Timeout;

  constructor(
    private readonly emCurso: Set<Envio>,
    private readonly alvo: Destino,
    private readonly iniciadaEm: Date,
    private readonly inicio: number,
    private readonly timeoutMs: number,
    private readonly resolve: (resultado: ResultadoDoEnvio) => void,
    /** The POST's client span, when tracing records. */
    private readonly trecho: Trecho | undefined,
  ) {
    this.relogio = setTimeout(aoEsgotar, timeoutMs, this);
    emCurso.add(this);
  }

  onConnect(abort: (erro?: Error) => void): void {
    // Ended (timeout, cortar) while it waited for a connection: it goes no further.
    if (this.terminou) abort();
    else this.abortarPedido = abort;
  }

  onHeaders(status: number, brutos: Buffer[]): boolean {
    // Below 100 is no HTTP status, though llhttp reads any three digits (undici then fails an
    // assertion of its own, whose text would be the attempt's). Refused here, the status not kept.
    if (status < 100) {
      this.concluir(`invalid answer: ${String(status).padStart(3, '0')} is not an HTTP status`);
      this.abortarPedido?.();
      return false;
    }
    // 1xx: node:http's 'information', passed over as node:http did; the final answer follows.
    if (status < 200) return true;
    this.status = status;
    if (status === 429 || status === 503) this.retryAfterMs = lerRetryAfter(cabecalhoDaResposta(brutos, 'retry-after'));
    else if (status >= 300 && status < 400) this.localizacao = cabecalhoDaResposta(brutos, 'location')?.trim();
    return true;
  }

  onData(pedaco: Buffer): boolean {
    if (this.terminou) return true;
    if (this.lidos < MAX_RESPOSTA) {
      this.pedacos ??= [];
      this.pedacos.push(pedaco);
    }
    this.lidos += pedaco.length;
    if (this.lidos < MAX_RESPOSTA) return true;
    // Enough: the rest of the answer is not read (an endless answer must not hold the worker). The
    // abort destroys the connection; false keeps undici's parser from going on with this piece.
    this.fimComStatus();
    this.abortarPedido?.();
    return false;
  }

  onComplete(): void {
    this.fimComStatus();
  }

  onError(erro: Error): void {
    if (this.terminou) return;
    // Failed after its status came (cut mid-answer): the status decides, as with node:http.
    if (this.status !== null) this.fimComStatus();
    else this.concluir(textoDoErro(erro, this.alvo));
  }

  /** The timer: a status already received decides; only the rest of the answer is given up. */
  esgotou(): void {
    if (this.status !== null) this.fimComStatus();
    else this.concluir(`timeout: no answer within ${this.timeoutMs} ms`);
    this.abortarPedido?.();
  }

  abortar(): void {
    this.concluir('aborted: the worker is stopping');
    this.abortarPedido?.();
  }

  private fimComStatus(): void {
    const status = this.status;
    if (status !== null && status >= 300 && status < 400)
      this.concluir(`redirect (HTTP ${status}${this.localizacao ? ` to ${this.localizacao}` : ''}) not followed`);
    else this.concluir(status !== null && status >= 200 && status < 300 ? null : `HTTP ${status}`);
  }

  private resposta(): string | null {
    if (this.status === null) return null;
    const pedacos = this.pedacos;
    if (pedacos === undefined) return '';
    const texto = (pedacos.length === 1 ? pedacos[0]! : Buffer.concat(pedacos))
      .subarray(0, MAX_RESPOSTA)
      .toString('utf8');
    return texto.includes('\u0000') ? texto.replaceAll('\u0000', '') : texto;
  }

  private concluir(erro: string | null): void {
    if (this.terminou) return;
    this.terminou = true;
    clearTimeout(this.relogio);
    this.emCurso.delete(this);
    const status = this.status;
    const sucesso = erro === null && status !== null && status >= 200 && status < 300;
    const resultado: ResultadoDoEnvio = {
      iniciadaEm: this.iniciadaEm,
      duracaoMs: Math.round(performance.now() - this.inicio),
      statusHttp: status,
      sucesso,
      resposta: this.resposta(),
      erro: sucesso ? null : corta(erro ?? `HTTP ${status}`, MAX_ERRO),
    };
    if (this.retryAfterMs !== undefined) resultado.retryAfterMs = this.retryAfterMs;
    if (this.trecho) fimDoTrecho(this.trecho, status, resultado.erro);
    this.resolve(resultado);
  }
}

function aoEsgotar(envio: Envio) {
  envio.esgotou();
}

/**
 * Ends the POST's client span as the HTTP instrumentation did for node:http: its status code, and
 * an error (with `error.type`) when no answer came or the answer was 4xx or 5xx.
 */
function fimDoTrecho(trecho: Trecho, status: number | null, erro: string | null) {
  if (status !== null) trecho.atributos({ 'http.response.status_code': status });
  if (status === null && erro !== null) {
    trecho.atributos({ 'error.type': erro.slice(0, Math.max(0, erro.indexOf(':'))) || 'error' });
    trecho.fim(erro);
  } else if (status !== null && status >= 400) {
    trecho.atributos({ 'error.type': String(status) });
    trecho.fim(`HTTP ${status}`);
  } else trecho.fim();
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
