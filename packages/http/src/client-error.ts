import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { AppError, problemOf } from './errors';

/** How long a refused connection is kept open, reading and discarding, before it is cut. */
const DRAIN_MS = 5_000;

/** What Node's HTTP parser error codes mean for the client. */
function refusalOf(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        431,
        'cabecalhos_grandes_demais',
        'the request line or headers are larger than this server accepts',
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError(413, 'corpo_grande_demais', 'the chunk extensions are larger than this server accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(408, 'tempo_esgotado', 'the request was not received in time');
    default:
      return new AppError(400, 'requisicao_invalida', 'the request is not valid HTTP/1.1');
  }
}

/** The raw HTTP/1.1 answer to a request the parser refused: problem+json, then the end. */
export function clientErrorResponse(code: string | undefined): string {
  const refusal = refusalOf(code);
  const body = JSON.stringify(problemOf(refusal));
  return [
    `HTTP/1.1 ${refusal.status} ${refusal.title}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Node's own field for the response being written on a socket (null between requests). */
interface InFlight {
  _httpMessage?: object | null;
}

const answered = new WeakSet<Socket>();

/**
 * `clientError` listener: answers requests Node's parser refuses (oversized request line or
 * headers, malformed HTTP) with a problem+json body instead of a bare status.
 *
 * Closing at once would reset the connection while the client is still sending (at ~100 KB of
 * headers curl saw ECONNRESET, and at a few MB the answer itself was lost), so the write side is
 * ended and the rest is read and discarded (the parser keeps consuming it and calls here again)
 * until the client closes or DRAIN_MS passes.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  // The request was answered before its body arrived (see drainAfterEarlyAnswer): the client has its
  // answer, and only the rest of its body is cut.
  if ((socket as Socket & EarlyAnswered)[EARLY_ANSWER]) {
    socket.destroy();
    return;
  }
  const inFlight = (socket as Socket & InFlight)._httpMessage as ServerResponse | null | undefined;
  // A body that did not arrive in time (the server's requestTimeout) while its answer has not
  // started: 408 on its own response, and the connection closes.
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && inFlight && !inFlight.headersSent && socket.writable) {
    const refusal = refusalOf(error.code);
    const body = JSON.stringify(problemOf(refusal));
    inFlight.shouldKeepAlive = false;
    inFlight.writeHead(refusal.status, {
      'Content-Type': 'application/problem+json',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    });
    inFlight.end(body);
    cutAfterDrain(socket);
    return;
  }
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // An earlier request on this connection, its body all here, is still being answered: the refused
  // bytes are a later request's. Anything written now would be read as that answer (or land inside
  // it), and cutting the connection would lose it (a publication's 201), so the answer goes out whole
  // and then the connection closes, the refused request unanswered.
  if (inFlight?.req?.complete) {
    inFlight.shouldKeepAlive = false;
    inFlight.once('finish', () => {
      socket.end();
      cutAfterDrain(socket);
    });
    return;
  }
  // The request being answered is the one refused (its body broke off): nothing of it can be sent.
  if (inFlight) {
    socket.destroy();
    return;
  }
  socket.end(clientErrorResponse(error.code));
  cutAfterDrain(socket);
}

function cutAfterDrain(socket: Socket): void {
  const cut = setTimeout(() => socket.destroy(), DRAIN_MS);
  cut.unref();
  socket.once('close', () => clearTimeout(cut));
}

const EARLY_ANSWER = Symbol('answered before its body arrived');
type EarlyAnswered = { [EARLY_ANSWER]?: true };

/**
 * For an answer sent before its request's body arrived (a 401 or a 503 of admission, which do not
 * read it): Node reads and discards the rest, and the connection stays for the next request if it
 * comes within DRAIN_MS; otherwise the connection is cut. A client that sends its body slowly, or
 * never, keeps nothing of the server once it has its answer. listen() calls this for every answer.
 */
export function drainAfterEarlyAnswer(req: IncomingMessage): void {
  if (req.complete) return;
  const socket = req.socket as Socket & EarlyAnswered;
  socket[EARLY_ANSWER] = true;
  const cut = setTimeout(() => socket.destroy(), DRAIN_MS);
  cut.unref();
  const done = () => {
    clearTimeout(cut);
    delete socket[EARLY_ANSWER];
    req.off('end', done);
    socket.off('close', done);
  };
  req.once('end', done);
  socket.once('close', done);
}

/** Installs answerClientError on a server (listen() does it; a server made elsewhere calls this). */
export function handleClientErrors(server: Server): Server {
  server.on('clientError', answerClientError);
  return server;
}
