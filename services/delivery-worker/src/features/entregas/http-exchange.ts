import type { WebhookHeaders } from '@hub/signing';
import type { Rastro, Trecho } from '@hub/tracing';
import type { Dispatcher, Pool } from 'undici';
import { lerRetryAfter } from './retry-after';

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

export const corta = (texto: string, max: number) => (texto.length > max ? `${texto.slice(0, max - 1)}…` : texto);

/** A destination URL as its attempts use it (Remetente.destinoDe). */
export interface Destino {
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
export function cabecalhosDoPedido(
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
export class Envio implements Dispatcher.DispatchHandler {
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
