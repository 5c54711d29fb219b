import type { Socket } from 'node:net';
import { connect } from 'node:net';

/**
 * A light connection of the gateway's own to one service instance, for the fast path: one request
 * at a time, written as one buffer, its answer read here by a small HTTP/1.1 response reader, with
 * no dispatcher, queue or request object between. The answer reaches the proxy through the same callbacks undici calls (the Exchange
 * in proxy.ts), so every failure is answered the same whichever way a request went.
 *
 * What it reads comes from the platform's own services, but it is read as strictly as from
 * anyone: a status line, header lines with a token for a name, one framing (Content-Length,
 * chunked, or to the end of the connection), and nothing more than was asked for. Anything else
 * ends the connection and fails the request under way.
 */

/** What a light connection calls on the request under way: undici's handler callbacks, headers as text. */
export interface Receptor {
  onConnect(abort: (error?: Error) => void): void;
  onHeadersText(status: number, headers: string[], resume: () => void, statusText: string): void;
  onData(chunk: Buffer): boolean;
  onComplete(): void;
  onError(error: Error): void;
}

/** Where an instance listens: a Unix socket's path, or a host and port (plain HTTP only). */
export type Destino = { path: string } | { host: string; port: number };

/** The longest answer head read (status line and headers), as node:http's default limit. */
export const CABECA_MAXIMA = 16 * 1024;
/** The longest chunk-size line (hex digits, extensions) read. */
const LINHA_MAXIMA = 1024;
const CRLF = Buffer.from('\r\n');
export const FIM_DA_CABECA = Buffer.from('\r\n\r\n');
/** A status line; its reason phrase as a field value (Node refuses to write one with a control byte). */
const STATUS = /^HTTP\/1\.([01]) ([1-9]\d{2})(?: ([\t\x20-\x7e\x80-\xff]*))?$/;
const NOME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A field value: visible characters, spaces and tabs, and obs-text (RFC 9110 §5.5); no control byte. */
export const VALOR_DE_CAMPO = /^[\t\x20-\x7e\x80-\xff]*$/;
export const DIGITOS = /^\d{1,15}$/;
const HEX = /^[0-9A-Fa-f]{1,12}$/;

/** Where the reader is in the answer under way. */
enum Estado {
  /** No request under way. */
  Livre,
  Cabeca,
  /** A body of a known length (`falta` bytes to go). */
  Corpo,
  ChunkTamanho,
  /** A chunk's data (`falta` bytes to go). */
  ChunkDados,
  /** The CRLF after a chunk's data. */
  ChunkFim,
  /** The trailer lines after the last chunk, up to an empty one. */
  Trailers,
  /** A body that ends with the connection. */
  AteOFim,
}

/**
 * A value without the optional whitespace around it: spaces and tabs only (RFC 9110 §5.6.3).
 * String.trim would take form feeds and no-break spaces too, and a Content-Length of "\f5" with them.
 */
function semOWS(texto: string): string {
  let inicio = 0;
  let fim = texto.length;
  while (inicio < fim && isOWS(texto.charCodeAt(inicio))) inicio += 1;
  while (fim > inicio && isOWS(texto.charCodeAt(fim - 1))) fim -= 1;
  return inicio === 0 && fim === texto.length ? texto : texto.slice(inicio, fim);
}
const isOWS = (codigo: number) => codigo === 32 || codigo === 9;

/**
 * A header line as [name, value], read as strictly by the light reader as by the raw front: a token
 * for a name, optional whitespace of spaces and tabs around a field value without a control byte.
 * What is wrong otherwise: 'nome' (no name, or not a token) or 'valor' (a control byte).
 */
export function campoDe(linha: string): [string, string] | 'nome' | 'valor' {
  const doisPontos = linha.indexOf(':');
  const nome = doisPontos > 0 ? linha.slice(0, doisPontos) : '';
  if (!NOME.test(nome)) return 'nome';
  const valor = semOWS(linha.slice(doisPontos + 1));
  if (!VALOR_DE_CAMPO.test(valor)) return 'valor';
  return [nome, valor];
}

const erro = (message: string, code: string) => Object.assign(new Error(message), { code });

export class ConexaoLeve {
  private readonly socket: Socket;
  private estado = Estado.Livre;
  private receptor: Receptor | undefined = undefined;
  private metodoHead = false;
  private buf: Buffer | undefined = undefined;
  private falta = 0;
  /** Bytes of trailer lines read so far in the answer under way. */
  private trailers = 0;
  private pausada = false;
  /** The answer under way keeps the connection (false: `Connection: close`, HTTP/1.0, or read to its end). */
  private manter = true;
  private fechada = false;

  constructor(
    destino: Destino,
    private readonly timeoutMs: number,
    private readonly ociosaMs: number,
    /** Called once when the connection is gone, to forget it. */
    private readonly aoFechar: (conexao: ConexaoLeve) => void,
  ) {
    this.socket = connect(destino);
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.chegou(chunk));
    this.socket.on('end', () => this.terminou());
    this.socket.on('error', (error) => this.falhar(error));
    this.socket.on('close', () => this.falhar(erro('the service closed the connection', 'UPSTREAM_CLOSED')));
    this.socket.on('timeout', () =>
      this.falhar(erro('the upstream did not answer in time', this.receptor ? 'UPSTREAM_TIMEOUT' : 'IDLE')),
    );
    this.socket.setTimeout(timeoutMs);
  }

  /** Free for a request: connected or connecting, nothing under way. */
  get livre(): boolean {
    return !this.fechada && this.estado === Estado.Livre;
  }

  /**
   * Sends one request: `head` is its request line and headers, ending in the empty line; `body`
   * its whole body, if any. The receptor hears of its answer, or of the failure.
   */
  enviar(head: string, body: Buffer | undefined, metodoHead: boolean, receptor: Receptor): void {
    this.receptor = receptor;
    this.metodoHead = metodoHead;
    this.estado = Estado.Cabeca;
    this.manter = true;
    this.socket.setTimeout(this.timeoutMs);
    // Each request's own abort and resume: the proxy may call them after its answer is whole, when
    // this connection already carries another request, which they must not touch.
    receptor.onConnect((error?: Error) => {
      if (this.receptor === receptor) this.falhar(error ?? erro('the request was aborted', 'UND_ERR_ABORTED'));
    });
    if (this.receptor !== receptor) return;
    this.socket.cork();
    this.socket.write(head, 'latin1');
    if (body !== undefined && body.length > 0) this.socket.write(body);
    this.socket.uncork();
  }

  /** Ends the connection (the proxy's close, or the client's connection gone); a request under way fails. */
  fechar(): void {
    this.falhar(erro('the connection to the service was closed', 'UPSTREAM_CLOSED'));
  }

  /** The connection goes, once, and is forgotten at once: no request is sent on it any more. */
  private encerrar(): void {
    if (this.fechada) return;
    this.fechada = true;
    this.socket.destroy();
    this.aoFechar(this);
  }

  private retomar(): void {
    if (!this.pausada || this.fechada) return;
    this.pausada = false;
    this.socket.setTimeout(this.timeoutMs);
    this.socket.resume();
    this.ler();
  }

  private chegou(chunk: Buffer): void {
    if (this.estado === Estado.Livre) {
      // Bytes nobody asked for: the connection cannot be trusted for the next request.
      this.falhar(erro('the service sent bytes with no request under way', 'UPSTREAM_PROTOCOL'));
      return;
    }
    this.buf = this.buf === undefined || this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    this.ler();
  }

  private terminou(): void {
    if (this.estado === Estado.AteOFim) {
      // What was read and not yet taken goes whole (it is already here): the answer ends with the connection.
      if (this.buf !== undefined && this.buf.length > 0) this.receptor!.onData(this.buf);
      this.buf = undefined;
      if (this.receptor !== undefined) this.concluir();
      return;
    }
    this.falhar(erro('the service closed the connection', 'UPSTREAM_CLOSED'));
  }

  /** Reads what has come, as far as it goes, while the client takes it. */
  private ler(): void {
    try {
      this.lerAteParar();
    } catch (error) {
      // A receptor that throws (an answer Node refuses to write) fails its request, as undici's
      // handler errors do, instead of escaping a socket's event as an uncaught exception.
      this.falhar(error as Error);
    }
  }

  private lerAteParar(): void {
    while (this.buf !== undefined && !this.pausada && !this.fechada) {
      const buf = this.buf;
      switch (this.estado) {
        case Estado.Cabeca: {
          const fim = buf.indexOf(FIM_DA_CABECA);
          if (fim === -1) {
            if (buf.length > CABECA_MAXIMA) {
              this.protocolo('an answer head too large');
              return;
            }
            return;
          }
          if (fim > CABECA_MAXIMA) {
            this.protocolo('an answer head too large');
            return;
          }
          this.buf = buf.subarray(fim + 4);
          if (!this.cabeca(buf.toString('latin1', 0, fim))) return;
          break;
        }
        case Estado.Corpo:
        case Estado.ChunkDados: {
          if (buf.length === 0) return;
          const parte = buf.length <= this.falta ? buf : buf.subarray(0, this.falta);
          this.falta -= parte.length;
          this.buf = buf.subarray(parte.length);
          if (this.falta === 0) {
            if (this.estado === Estado.Corpo) {
              this.entregar(parte);
              if (this.fechada) return;
              this.concluir();
              return;
            }
            this.estado = Estado.ChunkFim;
          }
          this.entregar(parte);
          break;
        }
        case Estado.ChunkFim: {
          if (buf.length < 2) return;
          if (buf[0] !== 13 || buf[1] !== 10) {
            this.protocolo('a chunk not followed by CRLF');
            return;
          }
          this.buf = buf.subarray(2);
          this.estado = Estado.ChunkTamanho;
          break;
        }
        case Estado.ChunkTamanho: {
          const fim = buf.indexOf(CRLF);
          if (fim > LINHA_MAXIMA) {
            this.protocolo('a chunk-size line too long');
            return;
          }
          if (fim === -1) {
            if (buf.length > LINHA_MAXIMA) {
              this.protocolo('a chunk-size line too long');
              return;
            }
            return;
          }
          const linha = buf.toString('latin1', 0, fim);
          const ext = linha.indexOf(';');
          const hex = semOWS(ext === -1 ? linha : linha.slice(0, ext));
          if (!HEX.test(hex)) {
            this.protocolo('a chunk size that is not hexadecimal');
            return;
          }
          this.buf = buf.subarray(fim + 2);
          this.falta = Number.parseInt(hex, 16);
          this.estado = this.falta === 0 ? Estado.Trailers : Estado.ChunkDados;
          this.trailers = 0;
          break;
        }
        case Estado.Trailers: {
          const fim = buf.indexOf(CRLF);
          // The trailer lines together, not each alone, within the head's limit.
          if ((fim === -1 ? buf.length : fim) + this.trailers > CABECA_MAXIMA) {
            this.protocolo('trailers too large');
            return;
          }
          if (fim === -1) return;
          this.trailers += fim + 2;
          this.buf = buf.subarray(fim + 2);
          // Trailers are not passed on (the client's answer has its own framing); the empty line ends the answer.
          if (fim === 0) {
            this.concluir();
            return;
          }
          break;
        }
        case Estado.AteOFim: {
          if (buf.length === 0) return;
          this.buf = buf.subarray(buf.length);
          this.entregar(buf);
          break;
        }
        default:
          return;
      }
    }
  }

  /** Reads an answer head; false when the reading stops (a failure, or a client that went). */
  private cabeca(texto: string): boolean {
    const linhas = texto.split('\r\n');
    const status = STATUS.exec(linhas[0]!);
    if (!status) return this.protocolo('an answer without a status line');
    const codigo = Number(status[2]);
    const headers: string[] = [];
    let tamanho: string | undefined;
    let transferencia: string | undefined;
    let conexao = '';
    for (let i = 1; i < linhas.length; i++) {
      const campo = campoDe(linhas[i]!);
      if (campo === 'nome') return this.protocolo('a header line without a name');
      if (campo === 'valor') return this.protocolo('a control byte in a header value');
      const [nome, valor] = campo;
      switch (nome.toLowerCase()) {
        case 'content-length':
          // One: a second, even an equal one, would reach the client, whose parser (llhttp's, undici's
          // on the express path) refuses the answer for it.
          if (!DIGITOS.test(valor) || tamanho !== undefined)
            return this.protocolo('a Content-Length that is not one number');
          tamanho = valor;
          break;
        case 'transfer-encoding':
          transferencia = transferencia === undefined ? valor : `${transferencia},${valor}`;
          break;
        case 'connection':
          conexao = `${conexao},${valor.toLowerCase()}`;
          break;
      }
      headers.push(nome, valor);
    }
    // 102 and 103 (Early Hints): never passed on, as node:http's 'information'; the final answer
    // follows. No request here asks to switch protocols or sends Expect: 101 and 100 are not answers.
    if (codigo < 200) {
      if (codigo === 100 || codigo === 101) return this.protocolo(`a ${codigo} nobody asked for`);
      return true;
    }
    this.manter =
      status[1] === '1' ? !/(^|,)\s*close\s*(,|$)/.test(conexao) : /(^|,)\s*keep-alive\s*(,|$)/.test(conexao);
    // Transfer-Encoding in HTTP/1.0 is faulty framing: read, then the connection goes (RFC 9112 §6.1).
    if (status[1] === '0' && transferencia !== undefined) this.manter = false;
    this.falta = 0;
    if (this.metodoHead || codigo === 204 || codigo === 304) {
      this.estado = Estado.Corpo;
      // An answer without a body whose service may send one anyway (a HEAD's, where a broken handler
      // writes the GET's body; a 204 or 304 that declares one) ends its connection: body bytes
      // coming a moment later would otherwise be read as the next request's answer, another
      // client's. Bytes in the same read are caught by concluir; later ones only this way.
      if (this.metodoHead || transferencia !== undefined || (tamanho !== undefined && Number(tamanho) > 0))
        this.manter = false;
    } else if (transferencia !== undefined) {
      if (tamanho !== undefined) return this.protocolo('both Content-Length and Transfer-Encoding');
      if (!/(^|,)\s*chunked\s*$/i.test(transferencia)) {
        this.estado = Estado.AteOFim;
        this.manter = false;
      } else this.estado = Estado.ChunkTamanho;
    } else if (tamanho !== undefined) {
      this.estado = Estado.Corpo;
      this.falta = Number(tamanho);
    } else {
      this.estado = Estado.AteOFim;
      this.manter = false;
    }
    const receptor = this.receptor!;
    receptor.onHeadersText(codigo, headers, () => this.receptor === receptor && this.retomar(), status[3] ?? '');
    if (this.fechada || this.receptor === undefined) return false;
    if (this.estado === Estado.Corpo && this.falta === 0) {
      this.concluir();
      return false;
    }
    return true;
  }

  private entregar(parte: Buffer): void {
    if (parte.length === 0) return;
    if (this.receptor!.onData(parte)) return;
    // The client is not taking it as fast: the service's answer waits (the proxy times a long wait).
    this.pausada = true;
    this.socket.setTimeout(0);
    this.socket.pause();
  }

  /** The answer is whole: the request is done, and the connection waits for the next (or goes). */
  private concluir(): void {
    const receptor = this.receptor!;
    const sobrou = this.buf !== undefined && this.buf.length > 0;
    this.receptor = undefined;
    this.estado = Estado.Livre;
    this.buf = undefined;
    if (!this.manter || sobrou) this.encerrar();
    else {
      // The answer's last piece may have paused the reading: the next answer is read again.
      if (this.pausada) {
        this.pausada = false;
        this.socket.resume();
      }
      this.socket.setTimeout(this.ociosaMs);
    }
    receptor.onComplete();
  }

  private protocolo(motivo: string): false {
    this.falhar(erro(`the service's answer was not HTTP/1.1 as read here: ${motivo}`, 'UPSTREAM_PROTOCOL'));
    return false;
  }

  /** The connection is done with; the request under way, if any, fails with `error`. */
  private falhar(error: Error): void {
    const receptor = this.receptor;
    this.receptor = undefined;
    this.estado = Estado.Livre;
    this.buf = undefined;
    this.encerrar();
    receptor?.onError(error);
  }
}
