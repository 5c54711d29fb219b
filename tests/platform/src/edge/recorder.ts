import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen, type RunningServer } from '@hub/http';

/** One request a recording server parsed: its head as node:http read it, and every body byte that came. */
export interface Registro {
  /** Which server parsed it (a service's name, or `referencia`). */
  servidor: string;
  method: string;
  url: string;
  /** The framing-relevant headers and X-Forwarded-*, as node:http joined them. */
  cabecalhos: Record<string, string | string[] | undefined>;
  authorization: string | undefined;
  corpo: Buffer;
  /** Its body ended (false: the connection closed, or is still open, before the end). */
  completo: boolean;
}

/** What a recording server answers: the request it got, so a client sees whose answer it read. */
export interface Resposta {
  servidor: string;
  method: string;
  url: string;
  authorization: string | null;
  corpo: number;
}

export interface Gravador extends RunningServer {
  nome: string;
  registros: Registro[];
  /** Forgets what was recorded (a case starts from nothing; the connections stay, as a proxy keeps them). */
  zerar(): void;
}

/** The headers recorded: framing, credentials, and what a proxy says about the client. */
const FRAMING = [
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'expect',
  'upgrade',
  'authorization',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
];

function gravar(nome: string, registros: Registro[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const cabecalhos: Registro['cabecalhos'] = {};
    for (const name of FRAMING) if (req.headers[name] !== undefined) cabecalhos[name] = req.headers[name];
    const registro: Registro = {
      servidor: nome,
      method: req.method ?? '',
      url: req.url ?? '',
      cabecalhos,
      authorization: req.headers.authorization,
      corpo: Buffer.alloc(0),
      completo: false,
    };
    registros.push(registro);
    req.on('data', (chunk: Buffer) => {
      registro.corpo = Buffer.concat([registro.corpo, chunk]);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      registro.completo = true;
      const resposta: Resposta = {
        servidor: nome,
        method: registro.method,
        url: registro.url,
        authorization: registro.authorization ?? null,
        corpo: registro.corpo.length,
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(resposta));
    });
  };
}

/**
 * A plain node:http server that records every request it parses and answers 200 with JSON naming
 * it. Started by @hub/http's listen, it has the platform's own timeouts and refusals (400/408/431 in
 * problem+json): as the reference of the differential it is what "a request" means, and as a
 * service behind the gateway or nginx it shows every request that arrived, with whose credentials.
 */
export async function startGravador(nome: string, requestTimeoutMs?: number): Promise<Gravador> {
  const registros: Registro[] = [];
  const running = await listen(gravar(nome, registros), 0, '127.0.0.1', { requestTimeoutMs });
  return {
    ...running,
    nome,
    registros,
    zerar() {
      registros.length = 0;
    },
    close: () => {
      running.server.closeAllConnections();
      return running.close();
    },
  };
}

/**
 * The lenient reference: node:http with llhttp's lenient mode (insecureHTTPParser: bare LF, control
 * bytes in values, and the like), for a system that re-frames every request it passes on (nginx):
 * there a request the strict reference refused may pass when the lenient reading finds the same one.
 */
export async function startGravadorLeniente(requestTimeoutMs: number): Promise<Gravador> {
  const registros: Registro[] = [];
  const server = createServer(
    { insecureHTTPParser: true, requestTimeout: requestTimeoutMs, headersTimeout: requestTimeoutMs },
    gravar('leniente', registros),
  );
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    nome: 'leniente',
    registros,
    zerar() {
      registros.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
