import { connect, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

/** Where the bytes go: a TCP port, or TLS (nginx at the edge) checked against `ca`. */
export interface Alvo {
  host: string;
  port: number;
  tls?: { ca: string; servername: string };
}

export interface Saida {
  /** Everything the server wrote back, as latin1 text. */
  texto: string;
  /** The server ended or closed the connection (false: the deadline came first, and the client cut it). */
  fechou: boolean;
  /** The status of every answer in `texto`, in order (1xx included). */
  status: number[];
  /** For a trickled case: bytes written before the server cut the connection. */
  escritos: number;
}

export interface Envio {
  /** Done as soon as an answer containing this text arrived (the clean request after the case). */
  ate?: string;
  /** The latest the client waits: past it the connection is cut (`fechou` false). */
  prazoMs: number;
  /** Ends the client's writing after the bytes (for servers with long timeouts). */
  meioFechar?: boolean;
  /** One byte every `gotejarMs` instead of all at once. */
  gotejarMs?: number;
}

const STATUS = /(?:^|\r\n)HTTP\/1\.[01] (\d{3})[ \r]/g;

export const statusDe = (texto: string): number[] => [...texto.matchAll(STATUS)].map((m) => Number(m[1]));

export function abrir(alvo: Alvo): Socket {
  if (alvo.tls === undefined) return connect(alvo.port, alvo.host);
  return connectTls({
    host: alvo.host,
    port: alvo.port,
    ca: alvo.tls.ca,
    servername: alvo.tls.servername,
    ALPNProtocols: ['http/1.1'],
  });
}

/** Writes `partes` (latin1) on a new connection and reads the answer until `ate`, the server's end, or the deadline. */
export function enviar(alvo: Alvo, partes: string[], envio: Envio): Promise<Saida> {
  const socket = abrir(alvo);
  const bytes = partes.map((p) => Buffer.from(p, 'latin1'));
  let texto = '';
  let escritos = 0;
  let gotejo: NodeJS.Timeout | undefined;
  return new Promise<Saida>((resolve) => {
    let terminado = false;
    const terminar = (fechou: boolean) => {
      if (terminado) return;
      terminado = true;
      clearTimeout(prazo);
      clearInterval(gotejo);
      socket.destroy();
      resolve({ texto, fechou, status: statusDe(texto), escritos });
    };
    const prazo = setTimeout(() => terminar(false), envio.prazoMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      texto += chunk;
      if (envio.ate !== undefined && texto.includes(envio.ate)) terminar(false);
    });
    socket.on('end', () => terminar(true));
    socket.on('close', () => terminar(true));
    socket.on('error', () => terminar(true));
    const pronto = alvo.tls === undefined ? 'connect' : 'secureConnect';
    socket.once(pronto, () => {
      if (envio.gotejarMs !== undefined) {
        const tudo = Buffer.concat(bytes);
        gotejo = setInterval(() => {
          if (escritos >= tudo.length || socket.destroyed) return clearInterval(gotejo);
          socket.write(tudo.subarray(escritos, escritos + 1));
          escritos += 1;
        }, envio.gotejarMs);
        return;
      }
      for (const parte of bytes) socket.write(parte);
      escritos = bytes.reduce((n, b) => n + b.length, 0);
      if (envio.meioFechar) socket.end();
    });
  });
}

const RESPOSTA = /\{"servidor":.*?"corpo":\d+\}/g;

/** The recorders' answers in `texto` (their JSON bodies, flat, `corpo` last), in order. */
export function respostas<T>(texto: string): T[] {
  return [...texto.matchAll(RESPOSTA)].map((m) => JSON.parse(m[0]) as T);
}
