import { createLogger } from '@hub/log';
import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { createHttpApp } from './app';
import { MAX_BODY_DEPTH } from './guard';
import { problemHandler } from './middleware';
import { MAX_QUERY_INT, page, pageQuery, queryText } from './pagination';
import { ApiRouter, idParams } from './route';

/** What reached a handler: a refused request must leave this untouched. */
const reached: unknown[] = [];

const router = new ApiRouter()
  .route(
    {
      method: 'get',
      path: '/itens',
      summary: 'page',
      tag: 't',
      query: pageQuery({ maxTamanho: 500 }).extend({ busca: queryText() }),
    },
    ({ query }) => {
      reached.push(query);
      return { ...page([], query, 0), busca: query.busca ?? null };
    },
  )
  .route({ method: 'get', path: '/sem-maximo', summary: 'page', tag: 't', query: pageQuery() }, ({ query }) =>
    page([], query, 0),
  )
  .route({ method: 'get', path: '/itens/:id', summary: 'one', tag: 't', params: idParams }, ({ params }) => {
    reached.push(params);
    return params;
  })
  .route(
    { method: 'get', path: '/nomes/:nome', summary: 'by name', tag: 't', params: z.object({ nome: z.string() }) },
    ({ params }) => {
      reached.push(params);
      return params;
    },
  )
  .route(
    { method: 'post', path: '/itens', summary: 'store', tag: 't', body: z.looseObject({}), status: 201 },
    ({ body }) => {
      reached.push(body);
      return { guardado: true };
    },
  );
const app = createHttpApp({ service: 'teste', logger: createLogger('teste'), routers: [router] });

const post = (json: string) => request(app).post('/itens').set('content-type', 'application/json').send(json);

/** Asserts a refusal in problem+json with the codigo, and that no handler saw the request. */
async function refused(response: request.Response, status: number, codigo: string) {
  expect({ status: response.status, codigo: response.body.codigo }).toEqual({ status, codigo });
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(reached).toEqual([]);
  return response.body;
}

const nested = (depth: number) => `{"dados":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

beforeEach(() => {
  reached.length = 0;
});

describe('The guard on bodies', () => {
  it('When a string holds NUL in a value or a key at any depth, then 422 dados_invalidos with each caminho', async () => {
    const body = await refused(
      await post('{"nome":"a\\u0000b","lista":[{"x":["ok","\\u0000"]}],"chave\\u0000":1,"a/b~":{"c":"\\u0000"}}'),
      422,
      'dados_invalidos',
    );
    expect(body.erros.map((e: { caminho: string }) => e.caminho).sort()).toEqual(
      ['/nome', '/lista/0/x/1', '/chave\u0000', '/a~1b~0/c'].sort(),
    );
  });

  it('When a string holds a lone surrogate in a value or a key, then 422 instead of being stored as U+FFFD', async () => {
    const body = await refused(
      await post('{"nome":"a\\ud800b","fim":["\\udfff"],"\\udbff":true,"par":"\\ud83d\\ude00"}'),
      422,
      'dados_invalidos',
    );
    expect(body.erros.map((e: { caminho: string }) => e.caminho).sort()).toEqual(['/fim/0', '/nome', '/\udbff'].sort());
  });

  it('When a number literal is beyond what a number holds (1e309), then 422 with its caminho', async () => {
    const body = await refused(await post('{"a":1e309,"b":[-1e400],"c":1e308}'), 422, 'dados_invalidos');
    expect(body.erros.map((e: { caminho: string }) => e.caminho).sort()).toEqual(['/a', '/b/0']);
  });

  it('When a key is __proto__ at any depth, then 422 with its caminho (Prisma would make it a prototype: a 500)', async () => {
    const body = await refused(
      await post('{"esquema":{"__proto__":null},"lista":[{"__proto__":{"x":1}}],"constructor":"ok"}'),
      422,
      'dados_invalidos',
    );
    expect(body.erros).toEqual([
      { caminho: '/lista/0/__proto__', mensagem: 'the field name must not be __proto__' },
      { caminho: '/esquema/__proto__', mensagem: 'the field name must not be __proto__' },
    ]);
    expect(reached).toEqual([]);
  });

  it('When more than 50 strings break the rule, then 422 lists 50', async () => {
    const many = JSON.stringify({ lista: Array.from({ length: 80 }, () => 'x\u0000') });
    expect((await refused(await post(many), 422, 'dados_invalidos')).erros).toHaveLength(50);
  });

  it('When a body is nested 100,000 levels deep, then 422 at the first level past the bound, not a 500', async () => {
    const body = await refused(await post(nested(100_000)), 422, 'dados_invalidos');
    expect(body.erros).toEqual([
      {
        caminho: `/dados${'/0'.repeat(MAX_BODY_DEPTH - 1)}`,
        mensagem: `must not be nested deeper than ${MAX_BODY_DEPTH} levels`,
      },
    ]);
  });

  it('When a body is nested exactly as deep as the bound, then it reaches the route', async () => {
    await post(nested(MAX_BODY_DEPTH)).expect(201);
    expect(reached).toHaveLength(1);
  });

  it('When the body bytes are not UTF-8, then 400 json_invalido instead of U+FFFD in their place', async () => {
    const bytes = Buffer.concat([Buffer.from('{"nome":"a'), Buffer.from([0xff, 0xed, 0xa0, 0x80]), Buffer.from('"}')]);
    const response = await request(app)
      .post('/itens')
      .set('content-type', 'application/json')
      // superagent would serialise a Buffer as JSON; the bytes must go as they are.
      .serialize(() => bytes as unknown as string)
      .send({});
    await refused(response, 400, 'json_invalido');
  });

  it('When the body is clean, with emoji and escapes, then it reaches the route unchanged', async () => {
    await post('{"nome":"Zoë \\ud83d\\ude00 \\u00e9","n":[1.5,-0,1e308],"v":null}').expect(201);
    expect(reached).toEqual([{ nome: 'Zoë 😀 é', n: [1.5, -0, 1e308], v: null }]);
  });
});

describe('The guard on queries', () => {
  it('When a query value or name holds NUL, then 400 consulta_invalida', async () => {
    await refused(await request(app).get('/itens?busca=a%00b'), 400, 'consulta_invalida');
    await refused(await request(app).get('/itens?bu%00sca=a'), 400, 'consulta_invalida');
  });

  it('When query percent-encoding does not decode to UTF-8, then 400 consulta_invalida, not U+FFFD', async () => {
    for (const query of ['busca=%ED%A0%80', 'busca=%FF', 'busca=%C3', 'busca=50%', 'b%FFusca=x']) {
      await refused(await request(app).get(`/itens?${query}`), 400, 'consulta_invalida');
    }
  });

  it('When a query parameter is repeated, then 400 consulta_invalida, not 500', async () => {
    await refused(await request(app).get('/itens?busca=a&busca=b'), 400, 'consulta_invalida');
    await refused(await request(app).get('/itens?tamanho=1&tamanho=2'), 400, 'consulta_invalida');
  });

  it('When the query is well encoded, then the route gets the decoded text', async () => {
    const response = await request(app).get('/itens?busca=%C3%A9+%F0%9F%98%80%25').expect(200);
    expect(response.body.busca).toBe('é 😀%');
  });
});

describe('The guard on paths', () => {
  it('When path percent-encoding does not decode, then 400 caminho_invalido, not the router URIError 500', async () => {
    for (const path of ['/nomes/%ED%A0%80', '/nomes/%FF', '/itens/%FF', '/%FF', '/nomes/%zz']) {
      await refused(await request(app).get(path), 400, 'caminho_invalido');
    }
  });

  it('When a path param holds NUL, then 400 caminho_invalido and no handler sees it', async () => {
    await refused(await request(app).get('/nomes/a%00b'), 400, 'caminho_invalido');
    await refused(await request(app).get('/itens/%00'), 400, 'caminho_invalido');
  });

  it('When a well-encoded path id is not an id, then 404 as before', async () => {
    await refused(await request(app).get('/itens/%C3%A9'), 404, 'nao_encontrado');
    await request(app).get('/nomes/%C3%A9').expect(200, { nome: 'é' });
  });

  it('When an app without the guard (the gateway) meets bad path encoding in a param, then 400', async () => {
    const bare = express();
    bare.get('/x/:id', (req, res) => {
      res.json(req.params);
    });
    bare.use(problemHandler(createLogger('teste')));
    expect((await request(bare).get('/x/%ED%A0%80').expect(400)).body.codigo).toBe('caminho_invalido');
  });
});

describe('Integer queries', () => {
  it('When pagina or tamanho has more than 15 digits, then it is clamped, not refused', async () => {
    const digits = '9'.repeat(400);
    const response = await request(app).get(`/itens?pagina=${digits}&tamanho=${digits}`).expect(200);
    expect(response.body).toMatchObject({ pagina: MAX_QUERY_INT, tamanho: 500 });
    expect((await request(app).get(`/itens?pagina=-${digits}`).expect(200)).body.pagina).toBe(1);
  });

  it('When a route has no maximum for tamanho, then it is held at the largest PostgreSQL integer', async () => {
    const response = await request(app).get('/sem-maximo?tamanho=99999999999999999').expect(200);
    expect(response.body.tamanho).toBe(MAX_QUERY_INT);
  });

  it('When the OpenAPI document is read, then pagina and tamanho are integers with their maximum', async () => {
    const doc = (await request(app).get('/openapi.json').expect(200)).body;
    const schemaOf = (path: string, name: string) =>
      doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name).schema;
    expect(schemaOf('/itens', 'tamanho')).toMatchObject({ type: 'integer', maximum: 500 });
    expect(schemaOf('/itens', 'pagina')).toMatchObject({ type: 'integer', maximum: MAX_QUERY_INT });
    expect(schemaOf('/sem-maximo', 'tamanho')).toMatchObject({ type: 'integer', maximum: MAX_QUERY_INT });
  });
});
