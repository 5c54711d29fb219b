import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request a test receiver got: headers and the raw body, as sent. */
export interface Recebido {
  caminho: string;
  cabecalhos: http.IncomingHttpHeaders;
  corpo: string;
}

export type Comportamento = (req: http.IncomingMessage, res: http.ServerResponse, corpo: string) => void;

/**
 * A real local HTTP receiver for tests: each path answers as its behaviour says, and every request
 * is kept (`guardar: false`: none is, for a benchmark's hundreds of thousands). Used by the worker's
 * tests and benchmarks.
 */
export async function iniciarReceptor(
  rotas: Record<string, Comportamento>,
  host = '127.0.0.1',
  { guardar = true }: { guardar?: boolean } = {},
) {
  const recebidos: Recebido[] = [];
  const abertos = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const partes: Buffer[] = [];
    req.on('data', (p: Buffer) => partes.push(p));
    req.on('end', () => {
      const corpo = Buffer.concat(partes).toString('utf8');
      const caminho = (req.url ?? '/').split('?')[0]!;
      if (guardar) recebidos.push({ caminho, cabecalhos: req.headers, corpo });
      abertos.add(res);
      res.on('close', () => abertos.delete(res));
      const rota = rotas[caminho];
      if (!rota) {
        res.writeHead(404).end();
        return;
      }
      rota(req, res, corpo);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (caminho: string) => `http://${host}:${port}${caminho}`,
    port,
    recebidos,
    /** Answers still open (held by a behaviour that has not ended them). */
    abertos: () => abertos.size,
    de: (caminho: string) => recebidos.filter((r) => r.caminho === caminho),
    fechar: async () => {
      for (const res of abertos) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type Receptor = Awaited<ReturnType<typeof iniciarReceptor>>;
