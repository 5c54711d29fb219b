import { type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Ambiente } from '@hub/config';
import {
  type AppError,
  clientErrorResponse,
  HEADERS_TIMEOUT_MS,
  problemOf,
  REQUEST_ID_HEADER,
  REQUEST_TIMEOUT_MS,
  registrarProblema,
  requestIdOf,
} from '@hub/http';
import { createRepeatLimiter, type Logger } from '@hub/log';
import { rastreamentoLigado } from '@hub/tracing';
import type { Caller, IdentifyCaller } from '../edge/caller';
import { corsHeadersFor } from '../edge/cors';
import type { RateLimiter } from '../edge/rate-limit';
import { API_POLICY, securityHeaderList } from '../edge/security-headers';
import type { ObserveRequest } from '../health/metrics';
import { type UpstreamName, upstreamOf } from '../routes';
import { METRICS } from './front';
import { answerHeaders, type GatewayHeaders, requestHeadersFrom } from './headers';
import { CABECA_MAXIMA, campoDe, DIGITOS, FIM_DA_CABECA, type Receptor } from './leve';
import { conexaoRecusada, type GatewayProxy, INTEIRO_ATE, type Leve } from './proxy';

/**
 * The gateway's raw front: its public port reads
 * requests off the socket itself when they are the fast path's, the plain case of a publication,
 * and hands every other connection to node:http, where the front (front.ts) and the express app
 * serve it as before.
 *
 * A request stays here only when all of it is the plain case, read strictly: a request line
 * `GET|HEAD|POST|PUT|PATCH|DELETE /path HTTP/1.1` for a service's path; header lines with a token
 * for a name and a field value; one Host; at most one Content-Length, of digits, up to 16 KiB, and
 * the whole body here; no Transfer-Encoding, Expect or Upgrade; a Connection of `keep-alive` or
 * `close` at most; a caller whose token verifies. Anything else, from its first byte, goes to
 * node:http with the connection, never to come back: Node's own parser then answers or refuses it
 * (a malformed request gets the same 400 it always got), so nothing is refused here that Node
 * would take, and nothing is taken here that Node would refuse. The request goes to its service on
 * a light connection (leve.ts), and the answer is written back as node:http would write it.
 */

export interface EntradaOptions {
  proxy: GatewayProxy;
  identify: IdentifyCaller;
  limiter: RateLimiter;
  ambiente: Ambiente;
  /** CORS_ORIGINS as the express app has them. */
  origins: readonly string[];
  observe: ObserveRequest;
  /** GATEWAY_BODY_LIMIT: a body over it is node:http's (and express's 413). */
  bodyLimit: number;
  logger: Logger;
}

export interface Entrada {
  /**
   * Takes the connections of `server` (node:http, listening): those of the fast path stay here, the
   * rest go to it. A request must arrive within `requestTimeoutMs`, its head within the lesser of
   * that and HEADERS_TIMEOUT_MS, as listen() tells node:http.
   */
  instalar(server: Server, requestTimeoutMs?: number): void;
  /**
   * The server is closing: idle connections end now, busy ones once their answer is written (it
   * says `Connection: close`), as listen()'s close does for node:http's.
   */
  fechar(): void;
}

/** Bytes of pipelined requests kept while one is answered; past them the client is not read until it is. */
const GUARDA_MAXIMA = 64 * 1024;
/** How long a connection ended after a refusal is kept for the client to read it. */
const ESPERA_DO_FIM_MS = 5_000;
const PEDIDO = /^(GET|HEAD|POST|PUT|PATCH|DELETE) (\/[\x21-\x7e]*) HTTP\/1\.1$/;

/** A request of the plain case: its head read, its body whole once the connection holds `tamanho` bytes. */
interface Pedido {
  metodo: string;
  /** Its target in origin form, as it came. */
  url: string;
  nome: UpstreamName;
  /** Its headers as a flat [name, value, …] list, names as they came. */
  raw: string[];
  authorization: string | undefined;
  origin: string | undefined;
  requestId: string | undefined;
  /** The client asked for `Connection: close`. */
  fechar: boolean;
  /** Its body, once all of it is here (undefined when it has none). */
  corpo: Buffer | undefined;
  /** Where its body starts on the connection: its head's bytes. */
  inicio: number;
  /** Its bytes on the connection, head and body. */
  tamanho: number;
}

const FALTA_CABECA = 0;
const OUTRO = 1;
type Lido = Pedido | typeof FALTA_CABECA | typeof OUTRO;

/**
 * The request at the start of `buf`: the plain case, its head read (its body may still be coming:
 * see `tamanho`); FALTA_CABECA while its head is still coming; OUTRO for anything not the plain
 * case (node:http's). A head is read once: its body's bytes do not read it again.
 */
function lerPedido(buf: Buffer, limiteDoCorpo: number): Lido {
  const fim = buf.indexOf(FIM_DA_CABECA);
  if (fim === -1) return buf.length > CABECA_MAXIMA ? OUTRO : FALTA_CABECA;
  if (fim > CABECA_MAXIMA) return OUTRO;
  const linhas = buf.toString('latin1', 0, fim).split('\r\n');
  const linha = PEDIDO.exec(linhas[0]!);
  if (linha === null) return OUTRO;
  const url = linha[2]!;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const nome = upstreamOf(path);
  if (nome === undefined || METRICS.test(path)) return OUTRO;
  const raw: string[] = [];
  let hosts = 0;
  let tamanho: number | undefined;
  let authorization: string | undefined;
  let origin: string | undefined;
  let requestId: string | undefined;
  let conexao: string | undefined;
  for (let i = 1; i < linhas.length; i++) {
    const campo = campoDe(linhas[i]!);
    if (typeof campo === 'string') return OUTRO;
    const [nomeDoCampo, valor] = campo;
    switch (nomeDoCampo.toLowerCase()) {
      case 'host':
        hosts += 1;
        break;
      case 'content-length':
        if (tamanho !== undefined || !DIGITOS.test(valor)) return OUTRO;
        tamanho = Number(valor);
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return OUTRO;
      case 'connection': {
        const opcao = valor.toLowerCase();
        if (conexao !== undefined || (opcao !== 'keep-alive' && opcao !== 'close')) return OUTRO;
        conexao = opcao;
        break;
      }
      // One of each, as a string (node:http keeps the first Authorization and joins the others).
      case 'authorization':
        if (authorization !== undefined) return OUTRO;
        authorization = valor;
        break;
      case 'origin':
        if (origin !== undefined) return OUTRO;
        origin = valor;
        break;
      case REQUEST_ID_HEADER:
        if (requestId !== undefined) return OUTRO;
        requestId = valor;
        break;
    }
    raw.push(nomeDoCampo, valor);
  }
  if (hosts !== 1 || (tamanho ?? 0) > limiteDoCorpo) return OUTRO;
  const inicio = fim + 4;
  return {
    metodo: linha[1]!,
    url,
    nome,
    raw,
    authorization,
    origin,
    requestId,
    fechar: conexao === 'close',
    corpo: undefined,
    inicio,
    tamanho: inicio + (tamanho ?? 0),
  };
}

/** An answer's Date, as node:http writes it, made once a second. */
let dataEm = 0;
let dataTexto = '';
function dataHttp(): string {
  const agora = Date.now();
  if (agora - dataEm >= 1000) {
    dataEm = agora - (agora % 1000);
    dataTexto = new Date(agora).toUTCString();
  }
  return dataTexto;
}

/** What the raw front's connections share. */
interface Compartilhado {
  opcoes: EntradaOptions;
  security: string[];
  cors: (origin: string | undefined, headers: string[]) => void;
  limit: ReturnType<typeof createRepeatLimiter>;
  clientes: Set<Cliente>;
  fechando: boolean;
  keepAliveMs: number;
  /** The largest body read here: INTEIRO_ATE, or GATEWAY_BODY_LIMIT when it is less. */
  limiteDoCorpo: number;
  /** How long a request may take to arrive (ms), and its head. */
  esperaDoPedido: number;
  esperaDaCabeca: number;
  /** The connection goes to node:http, as if it had just been accepted there. */
  paraONode(socket: Socket): void;
}

enum Estado {
  /** Reading the next request (or waiting for one). */
  Esperando,
  /**
   * A request is being answered (or its caller verified, or its answers wait for the client to take
   * them); what comes meanwhile is kept, up to GUARDA_MAXIMA.
   */
  Ocupado,
  /** Handed to node:http. */
  Entregue,
  Fechado,
}

/** A client's connection on the raw front: one request answered at a time, in order. */
class Cliente {
  estado = Estado.Esperando;
  private buf: Buffer | undefined = undefined;
  /** Room of our own that `buf` may end in, where the next bytes are copied (see guardar). */
  private reserva: Buffer | undefined = undefined;
  /** The request whose head was read and whose body is still arriving. */
  private pendente: Pedido | undefined = undefined;
  /**
   * Its answers written, the client has not taken them yet (the socket's buffer is full): the next
   * request is read once it has, as node:http does, so a client that never reads cannot have the
   * gateway answer request after request into its memory.
   */
  private esperandoDreno = false;
  /** When the first byte of the request still arriving came (performance.now); 0 when none is. */
  private desde = 0;
  troca: Troca | undefined = undefined;
  private pausado = false;
  private examinando = false;
  private denovo = false;

  /**
   * Its listeners on the socket, added together and, at the hand-over to node:http, removed together.
   * 'close' follows every error; the request under way hears of it there.
   */
  private readonly ouvintes: [string, (chunk: Buffer) => void][] = [
    ['data', (chunk: Buffer) => this.chegou(chunk)],
    ['end', () => this.terminou()],
    ['close', () => this.fechou()],
    ['timeout', () => this.esgotou()],
    ['drain', () => this.drenou()],
    ['error', () => undefined],
  ];

  constructor(
    readonly comum: Compartilhado,
    readonly socket: Socket,
  ) {
    socket.setNoDelay(true);
    for (const [evento, ouvinte] of this.ouvintes) socket.on(evento, ouvinte);
    socket.setTimeout(comum.keepAliveMs);
  }

  private chegou(chunk: Buffer): void {
    // Ended here (refused, or its last answer written): what the client still sends is read and dropped.
    if (this.estado === Estado.Fechado) return;
    this.guardar(chunk);
    if (this.estado === Estado.Esperando) this.examinar();
    else if (this.estado === Estado.Ocupado && this.buf!.length > GUARDA_MAXIMA && !this.pausado) {
      this.pausado = true;
      this.socket.pause();
    }
  }

  /**
   * Keeps `chunk` after what is kept. A request arriving a few bytes at a time is copied once, into
   * room that grows ahead of it, not whole again with every piece (a new 20 KB Buffer per piece cost
   * more than node:http's whole parse of it).
   */
  private guardar(chunk: Buffer): void {
    const buf = this.buf;
    if (buf === undefined || buf.length === 0) {
      this.buf = chunk;
      this.reserva = undefined;
      return;
    }
    const tamanho = buf.length + chunk.length;
    const reserva = this.reserva;
    // `buf` ends in our room, with space after it: nothing else looks at those bytes.
    if (reserva !== undefined && buf.buffer === reserva.buffer) {
      const inicio = buf.byteOffset - reserva.byteOffset;
      if (inicio >= 0 && inicio + tamanho <= reserva.length) {
        chunk.copy(reserva, inicio + buf.length);
        this.buf = reserva.subarray(inicio, inicio + tamanho);
        return;
      }
    }
    // Room for 4 KiB more at most: a connection holds little more than what it sent.
    const nova = Buffer.allocUnsafe(Math.max(4096, tamanho + Math.min(tamanho, 4096)));
    buf.copy(nova, 0);
    chunk.copy(nova, buf.length);
    this.reserva = nova;
    this.buf = nova.subarray(0, tamanho);
  }

  /**
   * Reads the next request, if it is all here, and answers it or hands the connection over. An
   * answer written at once (a refusal) reads the next request in the same loop, not deeper in the stack.
   */
  private examinar(): void {
    if (this.examinando) {
      this.denovo = true;
      return;
    }
    this.examinando = true;
    try {
      do {
        this.denovo = false;
        this.examinarUm();
      } while (this.denovo && this.estado === Estado.Esperando);
    } finally {
      this.examinando = false;
    }
  }

  private examinarUm(): void {
    const buf = this.buf;
    if (buf === undefined || buf.length === 0) {
      this.buf = undefined;
      this.reserva = undefined;
      this.desde = 0;
      if (this.comum.fechando) this.encerrar();
      else this.socket.setTimeout(this.comum.keepAliveMs);
      return;
    }
    const lido = this.pendente ?? lerPedido(buf, this.comum.limiteDoCorpo);
    if (lido === OUTRO) {
      this.entregar();
      return;
    }
    if (lido === FALTA_CABECA || buf.length < lido.tamanho) {
      if (lido !== FALTA_CABECA) this.pendente = lido;
      const agora = performance.now();
      if (this.desde === 0) this.desde = agora;
      // As node:http's headersTimeout and requestTimeout: counted from the request's first byte.
      const resta =
        this.desde + (lido === FALTA_CABECA ? this.comum.esperaDaCabeca : this.comum.esperaDoPedido) - agora;
      if (resta <= 0) {
        this.recusar('ERR_HTTP_REQUEST_TIMEOUT');
        return;
      }
      this.socket.setTimeout(Math.ceil(resta));
      return;
    }
    this.pendente = undefined;
    if (lido.tamanho > lido.inicio) lido.corpo = buf.subarray(lido.inicio, lido.tamanho);
    this.buf = lido.tamanho < buf.length ? buf.subarray(lido.tamanho) : undefined;
    this.desde = 0;
    this.estado = Estado.Ocupado;
    this.socket.setTimeout(0);
    this.atender(lido, buf.subarray(0, lido.tamanho));
  }

  /** Answers a request of the plain case once its caller is known; a caller nobody can name is node:http's. */
  private atender(pedido: Pedido, bytes: Buffer): void {
    const { identify } = this.comum.opcoes;
    const known = identify.known(pedido.authorization);
    if (known !== undefined) {
      this.encaminhar(pedido, bytes, known);
      return;
    }
    if (pedido.authorization === undefined) {
      this.devolver(bytes);
      return;
    }
    // A token not verified lately: verified here (concurrent requests with it share one verification).
    identify(pedido.authorization).then(
      (caller) => {
        if (this.estado !== Estado.Ocupado) return;
        if (caller === undefined) this.devolver(bytes);
        else this.encaminhar(pedido, bytes, caller);
      },
      () => this.estado === Estado.Ocupado && this.devolver(bytes),
    );
  }

  private encaminhar(pedido: Pedido, bytes: Buffer, caller: Caller): void {
    const { proxy, limiter } = this.comum.opcoes;
    const leve = proxy.leveDe(pedido.nome);
    // No light connection to have (an HTTPS instance, a service not deployed here, all taken): node:http's.
    if (leve === undefined) {
      this.devolver(bytes);
      return;
    }
    const requestId = requestIdOf(pedido.requestId);
    const counted = limiter.count(caller, undefined);
    const gateway = [
      REQUEST_ID_HEADER,
      requestId,
      ...this.comum.security,
      'ratelimit-policy',
      counted.policyHeader,
      'ratelimit',
      counted.stateHeader,
    ];
    this.comum.cors(pedido.origin, gateway);
    const troca = new Troca(this, pedido, gateway, requestId);
    this.troca = troca;
    if (counted.refusal !== undefined) {
      leve.devolver();
      troca.responderProblema(counted.refusal);
      return;
    }
    troca.enviar(leve, requestHeadersFrom(pedido.raw, this.socket.remoteAddress, requestId));
  }

  /** The request read goes back in front of what came after it, and the connection to node:http. */
  private devolver(bytes: Buffer): void {
    this.buf = this.buf === undefined || this.buf.length === 0 ? bytes : Buffer.concat([bytes, this.buf]);
    this.entregar();
  }

  /** The answer to the request under way is written: the next one, or the end. */
  respondido(troca: Troca): void {
    if (this.troca !== troca || this.estado !== Estado.Ocupado) return;
    this.troca = undefined;
    if (troca.fecha) {
      this.encerrar();
      return;
    }
    if (this.socket.writableNeedDrain) {
      // The server is closing: what was written goes out (see encerrar), and nothing more is read.
      if (this.comum.fechando) {
        this.encerrar();
        this.cortarDepois();
        return;
      }
      // Bounded as a stalled answer is: a client that takes nothing for this long goes.
      this.esperandoDreno = true;
      this.socket.setTimeout(this.comum.opcoes.proxy.timeoutMs);
      return;
    }
    this.proximo();
  }

  /** The client took what was written: the answer under way goes on, or the next request is read. */
  private drenou(): void {
    if (this.troca !== undefined) this.troca.drenou();
    else if (this.esperandoDreno && this.estado === Estado.Ocupado) {
      this.esperandoDreno = false;
      this.socket.setTimeout(0);
      this.proximo();
    }
  }

  private proximo(): void {
    this.estado = Estado.Esperando;
    if (this.pausado) {
      this.pausado = false;
      this.socket.resume();
    }
    this.examinar();
  }

  /** The connection, as it is, goes to node:http (Node reads what is kept here first). */
  private entregar(): void {
    const { socket } = this;
    this.estado = Estado.Entregue;
    this.comum.clientes.delete(this);
    for (const [evento, ouvinte] of this.ouvintes) socket.removeListener(evento, ouvinte);
    socket.setTimeout(0);
    if (this.pausado) {
      this.pausado = false;
      socket.resume();
    }
    const resto = this.buf;
    this.buf = undefined;
    this.reserva = undefined;
    this.pendente = undefined;
    if (resto !== undefined && resto.length > 0) socket.unshift(resto);
    this.comum.paraONode(socket);
  }

  /**
   * Refuses the request still arriving (Node's answer to the same: a 408 problem), and ends the
   * connection: cut ESPERA_DO_FIM_MS later whatever the client does meanwhile, as listen() cuts
   * one node:http refused (a client that keeps sending would otherwise keep it open).
   */
  private recusar(codigo: string): void {
    this.estado = Estado.Fechado;
    this.buf = undefined;
    this.reserva = undefined;
    this.pendente = undefined;
    this.socket.setTimeout(ESPERA_DO_FIM_MS);
    this.socket.end(clientErrorResponse(codigo));
    this.cortarDepois();
  }

  /**
   * The connection, ended here, is cut ESPERA_DO_FIM_MS from now whatever the client does: the
   * socket's own timeout waits longer while a write is stuck, and restarts with every byte read.
   */
  private cortarDepois(): void {
    const { socket } = this;
    const corte = setTimeout(() => socket.destroy(), ESPERA_DO_FIM_MS);
    corte.unref();
    socket.once('close', () => clearTimeout(corte));
  }

  /** Our side ends once what was written is sent; the connection goes then. */
  private encerrar(): void {
    if (this.estado === Estado.Fechado) return;
    this.estado = Estado.Fechado;
    this.buf = undefined;
    this.reserva = undefined;
    this.pendente = undefined;
    this.comum.clientes.delete(this);
    const { socket } = this;
    socket.setTimeout(ESPERA_DO_FIM_MS);
    socket.end(() => socket.destroy());
  }

  /** The server is closing: an idle connection goes now; a busy one after its answer. */
  fecharSeOcioso(): void {
    if (this.estado === Estado.Esperando) this.socket.destroy();
    // Its answers written, the client not taking them: they have ESPERA_DO_FIM_MS to go out.
    else if (this.esperandoDreno) {
      this.encerrar();
      this.cortarDepois();
    }
  }

  /**
   * The client ended its side. As node:http (not half-open): the request under way is abandoned,
   * its request to the service closed, and the connection ends.
   */
  private terminou(): void {
    this.troca?.clienteFoi();
    this.troca = undefined;
    this.encerrar();
  }

  private esgotou(): void {
    // Waiting for the rest of a request: its time may be up; idle, or ended and unread: it goes.
    if (this.estado === Estado.Esperando && this.buf !== undefined) this.examinar();
    else if (this.estado !== Estado.Ocupado || this.esperandoDreno) this.socket.destroy();
  }

  private fechou(): void {
    this.estado = Estado.Fechado;
    this.buf = undefined;
    this.reserva = undefined;
    this.pendente = undefined;
    this.comum.clientes.delete(this);
    this.troca?.clienteFoi();
    this.troca = undefined;
  }
}

/**
 * One request from the raw front to its service and its answer back: the light connection's
 * receptor (leve.ts), writing the answer to the client's socket as node:http would, with the
 * gateway's headers, the service's framing kept (or chunked when the service read to its end).
 */
class Troca implements Receptor {
  private readonly startedAt = performance.now();
  private leve: Leve | undefined = undefined;
  private headers: string[] = [];
  private abortar: ((error?: Error) => void) | undefined = undefined;
  private retomar: (() => void) | undefined = undefined;
  /** The answer's head, until its first bytes go with it. */
  private cabeca: string | undefined = undefined;
  /** The service's answer started: a failure from here on cuts the client's connection. */
  private comecou = false;
  private emPedacos = false;
  private status = 0;
  private parada: NodeJS.Timeout | undefined = undefined;
  private foi = false;
  private tentativas: number;
  /** The connection ends after this answer: the client asked, or the server began closing before its head was written. */
  fecha: boolean;

  constructor(
    private readonly cliente: Cliente,
    private readonly pedido: Pedido,
    private readonly gateway: GatewayHeaders,
    private readonly requestId: string,
  ) {
    this.fecha = pedido.fechar || cliente.comum.fechando;
    this.tentativas = cliente.comum.opcoes.proxy.instancias(pedido.nome) - 1;
  }

  enviar(leve: Leve, headers: string[]): void {
    this.leve = leve;
    this.headers = headers;
    leve.enviar(this.pedido.metodo, this.pedido.url, headers, this.pedido.corpo, this);
  }

  onConnect(abort: (error?: Error) => void): void {
    if (this.foi) abort();
    else this.abortar = abort;
  }

  onHeadersText(status: number, headers: string[], resume: () => void, statusText: string): void {
    this.retomar = resume;
    this.comecou = true;
    this.status = status;
    const lista = answerHeaders(headers, this.gateway);
    let head = `HTTP/1.1 ${status} ${statusText || STATUS_CODES[status] || 'unknown'}\r\n`;
    let comprimento = false;
    let data = false;
    for (let i = 0; i < lista.length; i += 2) {
      const nome = lista[i]!;
      if (nome.length === 14 && nome.toLowerCase() === 'content-length') comprimento = true;
      else if (nome.length === 4 && nome.toLowerCase() === 'date') data = true;
      head += `${nome}: ${lista[i + 1]}\r\n`;
    }
    if (!data) head += `date: ${dataHttp()}\r\n`;
    // An answer read to the end of the service's connection goes chunked, as node:http would send it.
    if (!comprimento && this.pedido.metodo !== 'HEAD' && status !== 204 && status !== 304) {
      this.emPedacos = true;
      head += 'transfer-encoding: chunked\r\n';
    }
    this.cabeca = head + this.conexao();
  }

  onData(chunk: Buffer): boolean {
    const { socket } = this.cliente;
    let ok: boolean;
    socket.cork();
    if (this.cabeca !== undefined) {
      socket.write(this.cabeca, 'latin1');
      this.cabeca = undefined;
    }
    if (this.emPedacos) {
      socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
      socket.write(chunk);
      ok = socket.write('\r\n', 'latin1');
    } else ok = socket.write(chunk);
    socket.uncork();
    if (ok) return true;
    // The client is not taking it as fast: the service's answer waits, GATEWAY_UPSTREAM_TIMEOUT at most.
    this.parada = setTimeout(parou, this.cliente.comum.opcoes.proxy.timeoutMs, this);
    return false;
  }

  drenou(): void {
    if (this.parada === undefined) return;
    clearTimeout(this.parada);
    this.parada = undefined;
    this.retomar?.();
  }

  esgotou(): void {
    this.parada = undefined;
    this.abortar?.(
      Object.assign(new Error('the client did not read the answer in time'), { code: 'UPSTREAM_TIMEOUT' }),
    );
  }

  onComplete(): void {
    this.leve?.devolver();
    this.leve = undefined;
    this.desparar();
    const { socket } = this.cliente;
    if (this.cabeca !== undefined || this.emPedacos) {
      socket.cork();
      if (this.cabeca !== undefined) socket.write(this.cabeca, 'latin1');
      if (this.emPedacos) socket.write('0\r\n\r\n', 'latin1');
      socket.uncork();
      this.cabeca = undefined;
    }
    this.observar();
    this.cliente.respondido(this);
  }

  onError(error: Error): void {
    this.leve = undefined;
    this.desparar();
    if (this.foi) return;
    const { proxy, logger } = this.cliente.comum.opcoes;
    // A refused connection is tried on the next instance, once per instance (nothing of it was consumed).
    if (conexaoRecusada(error) && !this.comecou && this.tentativas > 0) {
      this.tentativas -= 1;
      logger.warn(
        { upstream: this.pedido.nome, code: (error as NodeJS.ErrnoException).code },
        'upstream instance refused the connection; trying the next',
      );
      const leve = proxy.leveDe(this.pedido.nome);
      if (leve !== undefined) {
        this.enviar(leve, this.headers);
        return;
      }
    }
    if (this.comecou) {
      logger.warn(
        { upstream: this.pedido.nome, code: (error as NodeJS.ErrnoException).code, request_id: this.requestId },
        'upstream failed after the response started',
      );
      this.cliente.socket.destroy();
      return;
    }
    this.responderProblema(proxy.falhaDe(this.pedido.nome, error));
  }

  /** The client's connection went: the request to the service goes too, freeing its connection. */
  clienteFoi(): void {
    this.foi = true;
    this.desparar();
    this.abortar?.();
  }

  /** Answers the gateway's own refusal (the rate limit's, a service not answering) as the problem handler would. */
  responderProblema(error: AppError): void {
    const { opcoes, limit } = this.cliente.comum;
    const corpo = JSON.stringify(problemOf(error));
    const campos = [...this.gateway];
    for (const [nome, valor] of Object.entries(error.headers ?? {})) campos.push(nome.toLowerCase(), valor);
    let head = `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'unknown'}\r\n`;
    for (let i = 0; i < campos.length; i += 2) head += `${campos[i]}: ${campos[i + 1]}\r\n`;
    head += `content-type: application/problem+json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(corpo)}\r\n`;
    head += `date: ${dataHttp()}\r\n${this.conexao()}`;
    const { socket } = this.cliente;
    socket.cork();
    socket.write(head, 'latin1');
    if (this.pedido.metodo !== 'HEAD') socket.write(corpo);
    socket.uncork();
    registrarProblema(opcoes.logger, limit, error, {
      method: this.pedido.metodo,
      path: this.pedido.url.split('?')[0],
      request_id: this.requestId,
    });
    this.status = error.status;
    this.observar();
    this.cliente.respondido(this);
  }

  /** The answer's Connection header, and the empty line ending its head. */
  private conexao(): string {
    if (this.cliente.comum.fechando) this.fecha = true;
    return this.fecha
      ? 'connection: close\r\n\r\n'
      : `connection: keep-alive\r\nkeep-alive: timeout=${Math.floor(this.cliente.comum.keepAliveMs / 1000)}\r\n\r\n`;
  }

  private observar(): void {
    const seconds = (performance.now() - this.startedAt) / 1000;
    this.cliente.comum.opcoes.observe(this.pedido.nome, this.pedido.metodo, this.status, seconds);
  }

  private desparar(): void {
    if (this.parada === undefined) return;
    clearTimeout(this.parada);
    this.parada = undefined;
  }
}

function parou(troca: Troca) {
  troca.esgotou();
}

export function createEntrada(opcoes: EntradaOptions): Entrada {
  const comum: Compartilhado = {
    opcoes,
    security: securityHeaderList(opcoes.ambiente, API_POLICY),
    cors: corsHeadersFor(opcoes.origins),
    limit: createRepeatLimiter(),
    clientes: new Set(),
    fechando: false,
    keepAliveMs: 65_000,
    limiteDoCorpo: Math.min(INTEIRO_ATE, opcoes.bodyLimit),
    esperaDoPedido: REQUEST_TIMEOUT_MS,
    esperaDaCabeca: HEADERS_TIMEOUT_MS,
    paraONode: () => {
      throw new Error('the raw front is not installed on a server');
    },
  };
  return {
    instalar(server, requestTimeoutMs = REQUEST_TIMEOUT_MS) {
      // Traced, every request goes through node:http, whose instrumentation records the gateway's
      // server span and makes it the services' parent.
      if (rastreamentoLigado()) return;
      comum.esperaDoPedido = requestTimeoutMs;
      comum.esperaDaCabeca = Math.min(requestTimeoutMs, HEADERS_TIMEOUT_MS);
      // node:http's own listener takes what is handed over, exactly as a connection it accepted.
      const ouvintes = server.listeners('connection') as ((socket: Socket) => void)[];
      server.removeAllListeners('connection');
      comum.keepAliveMs = server.keepAliveTimeout;
      comum.paraONode = (socket) => {
        for (const ouvir of ouvintes) ouvir.call(server, socket);
      };
      server.on('connection', (socket: Socket) => {
        if (comum.fechando) {
          comum.paraONode(socket);
          return;
        }
        comum.clientes.add(new Cliente(comum, socket));
      });
    },
    fechar() {
      comum.fechando = true;
      for (const cliente of [...comum.clientes]) cliente.fecharSeOcioso();
    },
  };
}
