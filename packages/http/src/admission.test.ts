import { connect } from 'node:net';
import { createLogger } from '@hub/log';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { admission } from './admission';
import { createHttpApp, listen } from './app';
import { type AppError, forbidden, unauthorized } from './errors';
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

/** A request written by hand on its own connection: headers and the start of a body that never ends. */
function corpoLento(url: string, caminho: string, cabecalhos: Record<string, string> = {}) {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  let recebido = '';
  socket.on('data', (parte) => {
    recebido += String(parte);
  });
  socket.on('error', () => undefined);
  const linhas = Object.entries({ 'content-type': 'application/json', 'content-length': '1000', ...cabecalhos });
  socket.write(`POST ${caminho} HTTP/1.1\r\nhost: x\r\n${linhas.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n{"a":`);
  const fechado = new Promise<string>((resolve) => socket.on('close', () => resolve(recebido)));
  /** Resolves once what came back holds `texto`. */
  const recebeu = (texto: string) =>
    new Promise<string>((resolve) => {
      const ver = () => {
        if (!recebido.includes(texto) && !socket.destroyed) return;
        socket.off('data', ver);
        socket.off('close', ver);
        resolve(recebido);
      };
      socket.on('data', ver);
      socket.on('close', ver);
      ver();
    });
  return { socket, fechado, recebeu, recebido: () => recebido };
}

/** Polls until `check` holds (the test's own timeout bounds it). */
async function ateQue(check: () => Promise<boolean>) {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Who has the key in its headers passes; 'proibido' is authenticated but not allowed. */
const chave: RequestHandler = (req, _res, next) => {
  const dada = req.get('authorization');
  if (dada === 'Bearer proibido') throw forbidden('not this one');
  if (dada !== 'Bearer certa') throw unauthorized('no valid token');
  next();
};

function appComChave(max: number) {
  const corpos: unknown[] = [];
  const recusas: unknown[] = [];
  const limite = admission({ what: 'publications', max });
  const router = new ApiRouter().route(
    {
      method: 'post',
      path: '/eventos',
      summary: 'a',
      tag: 't',
      admission: limite,
      guards: [chave],
      body: z.object({}),
    },
    ({ body }) => {
      corpos.push(body);
      return body;
    },
  );
  // A route that looks at what it refuses (as hub-api records refused publications).
  router.router.use(((error, req, _res, next) => {
    recusas.push({ status: (error as AppError).status, corpo: req.body });
    next(error);
  }) as ErrorRequestHandler);
  const app = createHttpApp({ service: 'teste', logger: createLogger('teste'), routers: [router] });
  return { app, corpos, recusas };
}

test('When requests without a valid token send their bodies slowly, then they take no admission slot: each is answered 401 before its body and its connection closed, and an honest request is admitted', async () => {
  const t = appComChave(2);
  const server = await listen(t.app, 0);
  const lentos = [
    corpoLento(server.url, '/eventos'),
    corpoLento(server.url, '/eventos'),
    corpoLento(server.url, '/eventos', { authorization: 'Bearer falsa' }),
    corpoLento(server.url, '/eventos', { authorization: 'Bearer falsa' }),
  ];
  try {
    for (const lento of lentos) {
      const resposta = await lento.fechado;
      expect(resposta).toMatch(/^HTTP\/1\.1 401 /);
      expect(resposta).toMatch(/application\/problem\+json/);
      expect(resposta).toContain('"codigo":"nao_autenticado"');
    }
    const honestas = await Promise.all(
      [1, 2].map(() => request(server.url).post('/eventos').set('authorization', 'Bearer certa').send({ n: 1 })),
    );
    expect(honestas.map((r) => r.status)).toEqual([200, 200]);
  } finally {
    for (const lento of lentos) lento.socket.destroy();
    await server.close();
  }
});

test('When an authenticated caller is refused by a guard (403), then it takes no slot, and the route still sees the refusal with the body once it arrives', async () => {
  const t = appComChave(1);
  const server = await listen(t.app, 0);
  const lento = corpoLento(server.url, '/eventos', { authorization: 'Bearer proibido', 'content-length': '12' });
  try {
    // Admitted while the refused one is still sending.
    const honesta = await request(server.url).post('/eventos').set('authorization', 'Bearer certa').send({ n: 1 });
    expect(honesta.status).toBe(200);
    expect(lento.recebido()).toBe('');
    lento.socket.write('"b"}   ');
    expect(await lento.recebeu('"codigo":"sem_permissao"')).toMatch(/^HTTP\/1\.1 403 /);
    expect(t.recusas).toEqual([{ status: 403, corpo: { a: 'b' } }]);
  } finally {
    lento.socket.destroy();
    await server.close();
  }
});

test('When an admitted body does not arrive within the request timeout, then it is answered 408 tempo_esgotado in problem+json, its connection closed and its slot freed', async () => {
  const t = appComChave(1);
  const server = await listen(t.app, 0, '127.0.0.1', { requestTimeoutMs: 1_000 });
  const lento = corpoLento(server.url, '/eventos', { authorization: 'Bearer certa' });
  try {
    // It holds the one slot while it sends.
    await ateQue(
      async () =>
        (await request(server.url).post('/eventos').set('authorization', 'Bearer certa').send({})).status === 503,
    );
    const resposta = await lento.fechado;
    expect(resposta).toMatch(/^HTTP\/1\.1 408 /);
    expect(resposta).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(resposta.slice(resposta.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status: 408,
      codigo: 'tempo_esgotado',
    });
    const depois = await request(server.url).post('/eventos').set('authorization', 'Bearer certa').send({ n: 2 });
    expect(depois.status).toBe(200);
  } finally {
    lento.socket.destroy();
    await server.close();
  }
});

test('When bodies arrive slower than the target, then the time they took to come is not taken for the process answering slowly', async () => {
  const limite = admission({ what: 'publications', max: 10, targetMs: 100 });
  const router = new ApiRouter().route(
    { method: 'post', path: '/eventos', summary: 'a', tag: 't', admission: limite, body: z.object({}) },
    async ({ body }) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return body;
    },
  );
  const app = createHttpApp({ service: 'teste', logger: createLogger('teste'), routers: [router] });
  const server = await listen(app, 0);
  try {
    // One after the other, each body 300 ms after its head (a client uploading slowly): answered 30 ms after it came.
    for (let i = 0; i < 6; i += 1) {
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      const resposta = new Promise<string>((resolve) => {
        let texto = '';
        socket.on('data', (chunk: Buffer) => {
          texto += chunk.toString('latin1');
          if (texto.includes('\r\n\r\n')) resolve(texto);
        });
      });
      socket.write('POST /eventos HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n');
      await new Promise((resolve) => setTimeout(resolve, 300));
      socket.write('{}');
      expect(await resposta).toMatch(/^HTTP\/1\.1 200 /);
      socket.destroy();
    }
    // Eight at once, within the bound of 10 the process still answers in time: none refused.
    const respostas = await Promise.all(Array.from({ length: 8 }, () => request(server.url).post('/eventos').send({})));
    expect(respostas.map((r) => r.status)).toEqual(Array(8).fill(200));
  } finally {
    await server.close();
  }
});
