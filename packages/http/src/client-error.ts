import { IncomingMessage, type Server, ServerResponse } from 'node:http';
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

/** Writes a refusal's problem+json on a response of node:http, which writes its framing. */
function writeRefusal(res: ServerResponse, code: string | undefined): void {
  const refusal = refusalOf(code);
  const body = JSON.stringify(problemOf(refusal));
  res.shouldKeepAlive = false;
  res.writeHead(refusal.status, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * The answers of each connection not yet sent, oldest first, as the server's `request` events gave
 * them (Node answers a connection's requests in the order they came). Node hands `clientError` only
 * the socket, so this is how the listener knows which answers the refused bytes came behind.
 */
const answering = new WeakMap<Socket, ServerResponse[]>();

function track(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  const list = answering.get(socket) ?? [];
  list.push(res);
  answering.set(socket, list);
  const done = () => {
    const i = list.indexOf(res);
    if (i >= 0) list.splice(i, 1);
  };
  res.once('finish', done);
  res.once('close', done);
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
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const latest = answering.get(socket)?.at(-1);
  if (!latest) {
    // Nothing of this connection is being answered: the refusal gets a response of its own.
    const res = new ServerResponse(new IncomingMessage(socket));
    res.assignSocket(socket);
    res.once('finish', () => {
      res.detachSocket(socket);
      socket.end();
      cutAfterDrain(socket);
    });
    writeRefusal(res, error.code);
    return;
  }
  if (!latest.req.complete) {
    // A body that did not arrive in time (the server's requestTimeout), its answer not started: 408
    // on its own response. Any other refusal inside a body: nothing of that request can be sent.
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && !latest.headersSent) {
      writeRefusal(latest, error.code);
      cutAfterDrain(socket);
    } else socket.destroy();
    return;
  }
  // Every request of this connection so far has its body here and is being answered: the refused
  // bytes are a later request's. Anything written now would be read as one of those answers (or land
  // inside one), and cutting the connection would lose them (a publication's 201), so they go out
  // whole and then the connection closes, the refused request unanswered.
  latest.shouldKeepAlive = false;
  latest.once('finish', () => {
    socket.end();
    cutAfterDrain(socket);
  });
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
  // Before the app's listener, so an answer the app ends at once is seen finishing.
  server.prependListener('request', track);
  server.on('clientError', answerClientError);
  return server;
}
