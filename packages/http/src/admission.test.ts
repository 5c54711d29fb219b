import { createLogger } from '@hub/log';
import request from 'supertest';
import { z } from 'zod';
import { admission } from './admission';
import { createHttpApp, listen } from './app';
import { ApiRouter } from './route';

/** Two routes under one limiter of one request at a time, a third without; the handlers wait until released. */
function appDeTeste() {
  let soltar!: () => void;
  const solto = new Promise<void>((resolve) => {
    soltar = resolve;
  });
  let recusadas = 0;
  let lidos = 0;
  let avisar!: () => void;
  const primeiraEmCurso = new Promise<void>((resolve) => {
    avisar = resolve;
  });
  const limite = admission({ what: 'publications', max: 1, onShed: () => (recusadas += 1) });
  const lento = async ({ body }: { body: unknown }) => {
    lidos += 1;
    avisar();
    await solto;
    return body;
  };
  const router = new ApiRouter()
    .route({ method: 'post', path: '/eventos', summary: 'a', tag: 't', admission: limite, body: z.object({}) }, lento)
    .route({ method: 'post', path: '/evento', summary: 'b', tag: 't', admission: limite, body: z.object({}) }, lento)
    .route({ method: 'post', path: '/outra', summary: 'c', tag: 't', body: z.object({}) }, ({ body }) => body);
  const app = createHttpApp({ service: 'teste', logger: createLogger('teste'), routers: [router] });
  return { app, soltar, primeiraEmCurso, recusadas: () => recusadas, lidos: () => lidos };
}

test('When a route declares admission, then a request beyond the limit of its routes is refused 503 before its body is read, and other routes are not counted', async () => {
  const t = appDeTeste();
  const server = await listen(t.app, 0);
  try {
    const primeira = request(server.url).post('/eventos').send({});
    const emCurso = primeira.then((r) => r);
    await t.primeiraEmCurso;

    // The other route of the same limiter, spelled as express matches it (case, trailing slash).
    for (const caminho of ['/evento', '/EVENTOS/']) {
      const recusa = await request(server.url).post(caminho).set('content-type', 'application/json').send('{"x":');
      expect([recusa.status, recusa.body.codigo, recusa.headers['retry-after']]).toEqual([503, 'sobrecarregado', '1']);
    }
    expect(t.recusadas()).toBe(2);
    // A route without admission, and GET of a limited path, pass.
    expect((await request(server.url).post('/outra').send({})).status).toBe(200);
    expect((await request(server.url).get('/eventos')).status).toBe(404);

    t.soltar();
    expect((await emCurso).status).toBe(200);
    expect((await request(server.url).post('/evento').send({})).status).toBe(200);
    expect(t.lidos()).toBe(2);
  } finally {
    await server.close();
  }
});
