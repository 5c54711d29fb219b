import { IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { AppError, problemOf } from './errors';

/** How long a refused connection is kept open, reading and discarding, before it is cut. */
const DRAIN_MS = 5_000;
/** How long the answers under way on a connection with refused bytes get to go out before it is cut. */
const ANSWERS_MS = 60_000;

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

/** The last answer of this connection node:http has still to send, if any (a closing server waits for it). */
export function lastAnswerOf(socket: Socket): ServerResponse | undefined {
  return answering.get(socket)?.at(-1);
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
  try {
    refuse(error.code, socket);
  } catch {
    // A listener of clientError that throws ends the process: whatever went wrong, the connection goes.
    socket.destroy();
  }
}

function refuse(code: string | undefined, socket: Socket): void {
  // The request was answered before its body arrived (see drainAfterEarlyAnswer): the client has its
  // answer, and only the rest of its body is cut. Or the client is gone, or ended its side halfway
  // through a request (EOF): the request is cut, as the service behind must see it.
  const gone = code === 'ECONNRESET' || code === 'HPE_INVALID_EOF_STATE' || !socket.writable;
  if ((socket as Socket & EarlyAnswered)[EARLY_ANSWER] || gone) {
    socket.destroy();
    return;
  }
  const latest = answering.get(socket)?.at(-1);
  if (!latest) {
    refuseOnOwnResponse(code, socket);
    return;
  }
  if (!latest.req.complete && !latest.headersSent) {
    // The refused bytes are inside the body of the last request (a bad chunk, or the body not here
    // within requestTimeout: 408), whose answer has not started: the refusal is that answer. node:http
    // writes it after the earlier answers of the connection, whole.
    writeRefusal(latest, code);
  } else {
    // The refused bytes are a later request's, or the rest of a body whose answer was given without
    // it. Anything written now would be read as one of the answers under way (or land inside one),
    // and cutting the connection would lose them (a publication's 201), so they go out whole and then
    // the connection closes, the refused request unanswered.
    latest.shouldKeepAlive = false;
  }
  // An answer that never ends (it waits for the rest of the body) does not hold the connection.
  const cut = setTimeout(() => socket.destroy(), ANSWERS_MS);
  cut.unref();
  socket.once('close', () => clearTimeout(cut));
  latest.once('finish', () => {
    clearTimeout(cut);
    socket.end();
    cutAfterDrain(socket);
  });
}

/** Nothing of ours is being answered on the connection: the refusal gets a response of its own. */
function refuseOnOwnResponse(code: string | undefined, socket: Socket): void {
  const res = new ServerResponse(new IncomingMessage(socket));
  try {
    res.assignSocket(socket);
  } catch {
    // Node is sending an answer of its own on it (400 to a request without Host, 417 to an unknown
    // Expect), without a request event: that answer goes out, then the connection closes.
    socket.end();
    cutAfterDrain(socket);
    return;
  }
  res.once('finish', () => {
    res.detachSocket(socket);
    socket.end();
    cutAfterDrain(socket);
  });
  writeRefusal(res, code);
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
