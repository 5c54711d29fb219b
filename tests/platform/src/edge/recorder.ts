import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen, type RunningServer } from '@hub/http';

/** One request a recording server parsed: its head as node:http read it, and every body byte that came. */
export interface Registro {
  /** Which server parsed it (a service's name, or `referencia`). */
  servidor: string;
  method: string;
  url: string;
  /** The framing-relevant headers, as node:http joined them. */
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
  /** Forgets what was recorded and cuts every connection (a case starts from nothing). */
  zerar(): void;
}

const FRAMING = ['host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'upgrade', 'authorization'];

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
      running.server.closeAllConnections();
    },
    close: () => {
      running.server.closeAllConnections();
      return running.close();
    },
  };
}
