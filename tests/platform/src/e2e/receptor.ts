import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a subscriber received, with its raw body (what the signature covers). */
export interface Recebida {
  caminho: string;
  cabecalhos: http.IncomingHttpHeaders;
  corpo: Buffer;
  /** When it arrived (Date.now()). */
  em: number;
}

/**
 * A subscriber's HTTP endpoint in the test process: records every request and answers each path
 * with the status set for it (204 unless told), changeable while the test runs.
 */
export async function iniciarAssinante() {
  const recebidas: Recebida[] = [];
  const respostas = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const partes: Buffer[] = [];
    req.on('data', (parte: Buffer) => partes.push(parte));
    req.on('end', () => {
      const caminho = new URL(req.url ?? '/', 'http://x').pathname;
      recebidas.push({ caminho, cabecalhos: req.headers, corpo: Buffer.concat(partes), em: Date.now() });
      res.writeHead(respostas.get(caminho) ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (caminho: string) => `${base}${caminho}`,
    origem: base,
    responder: (caminho: string, status: number) => void respostas.set(caminho, status),
    de: (caminho: string) => recebidas.filter((r) => r.caminho === caminho),
    fechar: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
export type Assinante = Awaited<ReturnType<typeof iniciarAssinante>>;

/** A TCP port nobody listens on now (for a service that must come back on the same address). */
export function portaLivre(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
