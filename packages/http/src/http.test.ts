import { createLogger, currentRequestId } from '@hub/log';
import request from 'supertest';
import { z } from 'zod';
import { createHttpApp } from './app';
import { conflict } from './errors';
import { page, pageQuery } from './pagination';
import { ApiRouter, idParams } from './route';

const router = new ApiRouter()
  .route(
    { method: 'get', path: '/itens', summary: 'page', tag: 't', query: pageQuery({ maxTamanho: 500 }) },
    ({ query }) => page([], query, 0),
  )
  .route(
    {
      method: 'post',
      path: '/itens',
      summary: 'create',
      tag: 't',
      body: z.object({ nome: z.string().max(3) }).strict(),
      status: 201,
    },
    ({ body }) => body,
  )
  .route({ method: 'get', path: '/itens/:id', summary: 'one', tag: 't', params: idParams }, () => {
    throw conflict('ja_existe', 'it exists');
  })
  .route({ method: 'get', path: '/quebra', summary: 'boom', tag: 't' }, () => {
    throw new Error('secret internals');
  });
const app = createHttpApp({
  service: 'teste',
  logger: createLogger('teste'),
  routers: [router],
  readiness: { db: async () => 1 },
});

describe('The http kit', () => {
  it('When tamanho is above the maximum, then the maximum; below 1, then 1', async () => {
    expect((await request(app).get('/itens?tamanho=1000').expect(200)).body).toEqual({
      itens: [],
      pagina: 1,
      tamanho: 500,
      total: 0,
    });
    expect((await request(app).get('/itens?tamanho=0&pagina=-3').expect(200)).body).toMatchObject({
      pagina: 1,
      tamanho: 1,
    });
  });

  it('When a query number is not an integer, then 400 consulta_invalida', async () => {
    expect((await request(app).get('/itens?pagina=1.5').expect(400)).body.codigo).toBe('consulta_invalida');
    await request(app).get('/itens?pagina=1&pagina=2').expect(400);
  });

  it('When the body breaks the schema, then 422 with erros as JSON Pointers', async () => {
    const response = await request(app).post('/itens').send({ nome: 'longo', outro: 1 }).expect(422);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.erros).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ caminho: '/nome' }),
        expect.objectContaining({ caminho: '', mensagem: 'unknown field(s): outro' }),
      ]),
    );
  });

  it('When the body is not JSON at all, then 415', async () => {
    expect(
      (await request(app).post('/itens').set('content-type', 'text/plain').send('oi').expect(415)).body.codigo,
    ).toBe('tipo_de_conteudo_invalido');
  });

  it('When a handler throws an AppError, then its status and codigo in problem+json', async () => {
    const response = await request(app).get('/itens/0190a0c2-0000-7000-8000-000000000000').expect(409);
    expect(response.body).toEqual({
      type: 'urn:event-hub:problema:ja_existe',
      title: 'Conflict',
      status: 409,
      detail: 'it exists',
      codigo: 'ja_existe',
    });
  });

  it('When something unexpected breaks, then 500 with an erro_id and no internals', async () => {
    const response = await request(app).get('/quebra').expect(500);
    expect(response.body.codigo).toBe('erro_interno');
    expect(response.body.erro_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(response.body)).not.toContain('secret');
  });

  it('When the route does not exist, then 404 rota_inexistente; the request id comes back', async () => {
    const response = await request(app).get('/nada').set('x-request-id', 'abc-123').expect(404);
    expect(response.body.codigo).toBe('rota_inexistente');
    expect(response.headers['x-request-id']).toBe('abc-123');
  });

  it('When an app keeps no request context, then the request id still comes back, and a handler sees none in its context', async () => {
    const rota = new ApiRouter().route({ method: 'get', path: '/contexto', summary: 'context', tag: 't' }, () => ({
      contexto: currentRequestId() ?? null,
    }));
    const comContexto = createHttpApp({ service: 'teste', logger: createLogger('teste'), routers: [rota] });
    const semContexto = createHttpApp({
      service: 'teste',
      logger: createLogger('teste'),
      routers: [rota],
      requestContext: false,
    });
    const com = await request(comContexto).get('/contexto').set('x-request-id', 'abc-123').expect(200);
    expect({ corpo: com.body, id: com.headers['x-request-id'] }).toEqual({
      corpo: { contexto: 'abc-123' },
      id: 'abc-123',
    });
    const sem = await request(semContexto).get('/contexto').set('x-request-id', 'abc-123').expect(200);
    expect({ corpo: sem.body, id: sem.headers['x-request-id'] }).toEqual({ corpo: { contexto: null }, id: 'abc-123' });
  });

  it('When asked, then health, readiness, metrics and the OpenAPI document answer', async () => {
    await request(app).get('/saude').expect(200);
    expect((await request(app).get('/saude/prontidao').expect(200)).body.dependencias).toEqual({ db: 'ok' });
    expect((await request(app).get('/metrics').expect(200)).text).toContain('http_request_duration_seconds');
    const doc = (await request(app).get('/openapi.json').expect(200)).body;
    expect(doc.info.version).toBe('0.1.16');
    expect(Object.keys(doc.paths)).toEqual(['/itens', '/itens/{id}', '/quebra']);
  });
});
