import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A subscriber in the test process: answers 500 while `falhar` is set, 200 after; counts what it got. */
export interface Receptor {
  url: string;
  falhar: boolean;
  recebidos: number;
  fechar(): Promise<void>;
}

export async function iniciarReceptor(): Promise<Receptor> {
  let server: Server | undefined;
  const receptor: Receptor = {
    url: '',
    falhar: true,
    recebidos: 0,
    fechar: () => new Promise((resolve) => (server ? server.close(() => resolve()) : resolve())),
  };
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receptor.recebidos++;
      res.statusCode = receptor.falhar ? 500 : 200;
      res.end(receptor.falhar ? 'falha de teste' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  receptor.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/falha`;
  return receptor;
}
