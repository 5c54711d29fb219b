import { connect } from 'node:net';
import { createLogger, currentRequestId } from '@hub/log';
import { z } from 'zod';
import { createHttpApp, listen, type RunningServer } from './app';
import { ApiRouter } from './route';

/**
 * A fast route (fast-path.ts) answers with the request id of its context, the one its log lines
 * and what it stores carry: written with node's calls, as a fast route must.
 */
const rota = new ApiRouter().route(
  {
    method: 'post',
    path: '/rapida',
    summary: 'fast',
    tag: 't',
    body: z.object({ nome: z.string() }).strict(),
    status: 201,
    fast: true,
  },
  ({ res, body }) => {
    res.statusCode = 201;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ nome: body.nome, contexto: currentRequestId() ?? null }));
  },
);

let server: RunningServer;
beforeAll(async () => {
  server = await listen(createHttpApp({ service: 'teste', logger: createLogger('teste'), routers: [rota] }), 0);
});
afterAll(() => server.close());

/** Sends the headers, then the body in a later write of its own, and gives the answer's body. */
function enviarCorpoDepois(url: string, requestId: string): Promise<{ status: number; corpo: unknown }> {
  const corpo = JSON.stringify({ nome: 'a' });
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    let texto = '';
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      texto += chunk.toString();
      const fim = texto.indexOf('\r\n\r\n');
      if (fim === -1 || !texto.slice(fim).includes('}')) return;
      socket.destroy();
      resolve({ status: Number(texto.slice(9, 12)), corpo: JSON.parse(texto.slice(fim + 4)) });
    });
    socket.write(
      `POST ${url} HTTP/1.1\r\nHost: teste\r\nContent-Type: application/json\r\nX-Request-Id: ${requestId}\r\n` +
        `Content-Length: ${Buffer.byteLength(corpo)}\r\n\r\n`,
      // The body goes once the server has taken the request and started waiting for it.
      () => setTimeout(() => socket.write(corpo), 100),
    );
  });
}

describe('The fast path', () => {
  it('When the body arrives after the request was taken, then the route still runs in its request context, as on the express path', async () => {
    // The query string sends the same request through express (express.json binds its callback).
    expect(await enviarCorpoDepois('/rapida?caminho=express', 'pedido-express')).toEqual({
      status: 201,
      corpo: { nome: 'a', contexto: 'pedido-express' },
    });
    expect(await enviarCorpoDepois('/rapida', 'pedido-rapido')).toEqual({
      status: 201,
      corpo: { nome: 'a', contexto: 'pedido-rapido' },
    });
  });
});
