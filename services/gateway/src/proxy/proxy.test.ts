import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { startTestIdentity, type TestIdentity, waitFor } from '@hub/testing';
import request from 'supertest';
import { type GatewayUnderTest, osDoisChamadores, startGatewayWithKnownCaller } from '../testing/gateway.test-support';
import { INTEIRO_ATE } from './proxy';

/** A body the gateway streams rather than reads whole first (over INTEIRO_ATE). */
const GRANDE = 2 * INTEIRO_ATE;

/** Sends a chunked body (no Content-Length) of `size` bytes and resolves with the status and body. */
function sendChunked(
  url: string,
  path: string,
  size: number,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const write = () => {
      while (sent < size && !answered) {
        const piece = chunk.subarray(0, Math.min(chunk.length, size - sent));
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

/** GETs `url` with node:http (raw `headers`, repeated names kept) and resolves with the status and the body's size and text. */
function download(
  url: string,
  headers: string[],
): Promise<{ status: number; bytes: number; text: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (chunks.length < 16) chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, bytes, text: Buffer.concat(chunks).toString(), headers: res.headers }),
      );
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/** Writes a raw HTTP/1.1 request head and part of its body on a socket of its own, which the caller destroys. */
function startRawRequest(url: string, head: string, body: Buffer) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined);
  socket.write(head);
  socket.write(body);
  return socket;
}

/** How the client's GET of `url` ends: its whole answer ('complete'), or its connection cut ('cut'). */
function desfecho(url: string, headers: Record<string, string>): Promise<'complete' | 'cut'> {
  return new Promise((resolve) => {
    httpRequest(url, { headers }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve('complete'));
      res.on('error', () => resolve('cut'));
      res.on('aborted', () => resolve('cut'));
    })
      .on('error', () => resolve('cut'))
      .end();
  });
}

let identity: TestIdentity;
let token: string;
beforeAll(async () => {
  identity = await startTestIdentity();
  token = await identity.appToken('loja');
});
afterAll(() => identity.close());

const gatewayWith = (env: Record<string, string> = {}) => startGatewayWithKnownCaller(identity, token, env);

describe.each(osDoisChamadores(() => token))('gateway proxy, %s', (_name, headersOf) => {
  let gateway: GatewayUnderTest;
  let headers: Record<string, string>;

  beforeAll(async () => {
    headers = headersOf();
    gateway = await gatewayWith({ GATEWAY_BODY_LIMIT: '64kb' });
  });
  afterAll(() => gateway.close());

  it.each([
    ['/auth/acesso', 'access'],
    ['/perfil-de-acesso?pagina=2', 'access'],
    ['/colaborador/123', 'access'],
    ['/funcao/autocomplete?q=x', 'function'],
    ['/aplicativo/autocomplete', 'hub-api'],
    ['/versao-de-esquema?pagina=3', 'hub-api'],
    ['/esquema/pedido.criado/1', 'hub-api'],
    ['/tipo-de-evento', 'hub-api'],
    ['/entregas?situacao=fila_de_erro', 'hub-api'],
    ['/entregas/0193a5b2-7c4e-7d1a-9f3b-2a1c5e8d9f01', 'hub-api'],
    ['/assinaturas?pagina=2', 'hub-api'],
    ['/.well-known/jwks.json', 'hub-api'],
  ])('When GET %s, then the %s service answers it with the path and query intact', async (path, servico) => {
    const response = await request(gateway.url).get(path).set(headers).expect(200);
    expect(response.body).toMatchObject({ servico, url: path });
  });

  it('When a path belongs to no service, then 404 rota_inexistente without reaching any', async () => {
    const before = Object.values(gateway.upstreams).reduce((n, u) => n + u.seen.length, 0);
    const response = await request(gateway.url).get('/authx').set(headers).expect(404);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.body.codigo).toBe('rota_inexistente');
    expect(Object.values(gateway.upstreams).reduce((n, u) => n + u.seen.length, 0)).toBe(before);
  });

  it('When the caller sends a sane x-request-id, then the service receives it and the caller gets it back', async () => {
    const response = await request(gateway.url)
      .get('/auth')
      .set(headers)
      .set('x-request-id', 'pedido-123.abc')
      .expect(200);
    expect(response.body.request_id).toBe('pedido-123.abc');
    expect(response.headers['x-request-id']).toBe('pedido-123.abc');
  });

  it('When the caller sends no or an unsafe x-request-id, then the gateway makes one and passes it both ways', async () => {
    const response = await request(gateway.url)
      .get('/auth')
      .set(headers)
      .set('x-request-id', 'bad id <script>')
      .expect(200);
    const id = response.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.request_id).toBe(id);
  });

  it('When a body under the limit is posted, then the service receives all of it with forwarding headers', async () => {
    const body = { dados: 'x'.repeat(10_000) };
    const response = await request(gateway.url).post('/aplicativo').set(headers).send(body).expect(200);
    expect(response.body.bodyBytes).toBe(JSON.stringify(body).length);
    const seen = gateway.upstreams.hubApi.seen.at(-1)!;
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBe(new URL(gateway.url).host);
  });

  it('When the declared Content-Length is over the limit, then 413 corpo_grande_demais and the service sees nothing', async () => {
    const before = gateway.upstreams.hubApi.seen.length;
    const response = await request(gateway.url)
      .post('/aplicativo')
      .set(headers)
      .set('content-type', 'application/json')
      .send(JSON.stringify({ dados: 'x'.repeat(100 * 1024) }))
      .expect(413);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.body.codigo).toBe('corpo_grande_demais');
    expect(gateway.upstreams.hubApi.seen.length).toBe(before);
  });

  it('When a chunked body grows past the limit, then 413 corpo_grande_demais and the service sees nothing', async () => {
    const before = gateway.upstreams.hubApi.started.length;
    const response = await sendChunked(gateway.url, '/aplicativo', 200 * 1024, headers);
    expect(response.status).toBe(413);
    expect(response.body.codigo).toBe('corpo_grande_demais');
    expect(gateway.upstreams.hubApi.started.length).toBe(before);
  });

  it('When a chunked body stays under the limit, then the service receives it whole, with its length', async () => {
    const response = await sendChunked(gateway.url, '/aplicativo', 60 * 1024, headers);
    expect(response.status).toBe(200);
    expect(response.body.bodyBytes).toBe(60 * 1024);
    const seen = gateway.upstreams.hubApi.seen.at(-1)!;
    expect(seen.headers['content-length']).toBe(String(60 * 1024));
    expect(seen.headers['transfer-encoding']).toBeUndefined();
  });

  it('When the request carries hop-by-hop headers, then the service sees none of them, nor those its Connection names', async () => {
    const response = await request(gateway.url)
      .get('/funcao/cabecalhos')
      .set(headers)
      .set('connection', 'keep-alive, x-do-cliente')
      .set('x-do-cliente', 'so-ate-o-gateway')
      .set('keep-alive', 'timeout=30')
      .set('proxy-authorization', 'Basic eDp5')
      .set('te', 'trailers')
      .set('x-fica', 'sim')
      .expect(200);
    const seen = JSON.parse(response.text).headers as Record<string, string>;
    expect(seen['x-fica']).toBe('sim');
    for (const name of ['x-do-cliente', 'keep-alive', 'proxy-authorization', 'te'])
      expect({ name, value: seen[name] }).toEqual({ name, value: undefined });
    // The gateway's own connection to the service, kept alive.
    expect(seen.connection).toBe('keep-alive');
  });

  it("When the service's answer carries hop-by-hop headers, then the client sees none of them; repeated headers stay repeated and the gateway's are added", async () => {
    const response = await request(gateway.url)
      .get('/funcao/cabecalhos')
      .set(headers)
      .set('origin', 'http://localhost:5173')
      .expect(200);
    expect(response.headers['x-interno']).toBeUndefined();
    expect(response.headers['keep-alive']).toBeUndefined();
    expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(response.headers.vary).toBe('Accept');
    expect(response.headers['x-request-id']).toBeDefined();
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  it("When HEAD is asked, then the service's status and headers come back without a body", async () => {
    const response = await request(gateway.url).head('/tipo-de-evento').set(headers).expect(200);
    expect(response.headers['content-type']).toContain('application/json');
    expect(Number(response.headers['content-length'])).toBeGreaterThan(0);
    expect(response.text ?? '').toBe('');
    await request(gateway.url).get('/tipo-de-evento').set(headers).expect(200);
  });

  it('When the service does not answer in time, then 504 tempo_esgotado with Retry-After', async () => {
    const other = await gatewayWith({ GATEWAY_UPSTREAM_TIMEOUT: '200ms' });
    const response = await request(other.url).get('/funcao/lento').set(headers).expect(504);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.body.codigo).toBe('tempo_esgotado');
    expect(response.headers['retry-after']).toBe('2');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    // A body with a length, streamed: the time counts from its end.
    const posted = await request(other.url)
      .post('/funcao/lento')
      .set(headers)
      .send({ dados: 'x'.repeat(20_000) })
      .expect(504);
    expect(posted.body.codigo).toBe('tempo_esgotado');
    expect(other.upstreams.function.seen.at(-1)!.bodyBytes).toBeGreaterThan(20_000);
    await other.close();
  });

  it('When the client stops reading a long answer, then after GATEWAY_UPSTREAM_TIMEOUT the request to the service is closed', async () => {
    const other = await gatewayWith({ GATEWAY_UPSTREAM_TIMEOUT: '500ms' });
    const path = `/funcao/grande?bytes=${256 * 1024 * 1024}&parado=${Date.now()}`;
    const head = `GET ${path} HTTP/1.1\r\nHost: gateway\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    const socket = startRawRequest(other.url, head, Buffer.alloc(0));
    socket.pause();
    try {
      await waitFor(() => other.upstreams.function.started.includes(path), { what: 'the request at the service' });
      await waitFor(() => other.upstreams.function.interrupted.includes(path), {
        what: 'the service to see its request closed',
      });
    } finally {
      socket.destroy();
      await other.close();
    }
  });

  it('When the service dies in the middle of its response, then the client connection is cut rather than left waiting', async () => {
    expect(await desfecho(`${gateway.url}/funcao/quebra`, headers)).toBe('cut');
  });

  it('When the service resets the connection in the middle of its response, then the client connection is cut', async () => {
    expect(await desfecho(`${gateway.url}/funcao/reinicia-no-meio`, headers)).toBe('cut');
    await request(gateway.url).get('/funcao').set(headers).expect(200);
  });

  it('When the service sends 103 Early Hints first, then the client gets its final answer', async () => {
    const response = await request(gateway.url).get('/funcao/dicas').set(headers).expect(200);
    expect(response.body).toMatchObject({ servico: 'function', url: '/funcao/dicas' });
  });

  it('When the answer is several megabytes, then it comes whole', async () => {
    const size = 6 * 1024 * 1024;
    const response = await download(`${gateway.url}/funcao/grande?bytes=${size}`, [
      'Host',
      'gateway',
      ...Object.entries(headers).flat(),
    ]);
    expect(response.status).toBe(200);
    expect(response.bytes).toBe(size);
  });

  it('When a body of several megabytes with its length is posted, then the service receives it whole', async () => {
    const other = await gatewayWith({ GATEWAY_BODY_LIMIT: '8mb' });
    try {
      const size = 5 * 1024 * 1024;
      const response = await request(other.url)
        .post('/aplicativo')
        .set(headers)
        .set('content-type', 'application/octet-stream')
        .send(Buffer.alloc(size, 'c'))
        .expect(200);
      expect(response.body.bodyBytes).toBe(size);
    } finally {
      await other.close();
    }
  });

  it('When requests follow one another, then they share one kept-alive connection to the service, bodies included, until a HEAD ends it', async () => {
    const servico = gateway.upstreams.function;
    await request(gateway.url).get('/funcao/um').set(headers).expect(200);
    await request(gateway.url).post('/funcao/tres').set(headers).send({ a: 1 }).expect(200);
    expect((await sendChunked(gateway.url, '/funcao/quatro', 1024, headers)).status).toBe(200);
    await request(gateway.url).get('/funcao/cinco').set(headers).expect(200);
    await request(gateway.url).head('/funcao/dois').set(headers).expect(200);
    await request(gateway.url).get('/funcao/seis').set(headers).expect(200);
    const ports = servico.seen.slice(-6).map((seen) => seen.remotePort);
    expect(ports.slice(0, 5)).toEqual(Array(5).fill(ports[0]));
    // A body a broken service sent a HEAD anyway must not be read as the next answer (ataque.test.ts).
    expect(ports[5]).not.toBe(ports[0]);
  });

  it('When the request carries two Host headers, then 400 requisicao_invalida and no service sees it (RFC 9112 §3.2)', async () => {
    const antes = gateway.upstreams.function.started.length;
    const response = await download(`${gateway.url}/funcao/cabecalhos`, [
      'Host',
      'um.example',
      'Host',
      'dois.example',
      ...Object.entries(headers).flat(),
    ]);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).codigo).toBe('requisicao_invalida');
    expect(gateway.upstreams.function.started.length).toBe(antes);
  });

  it("When the service gets a request, then its Host is the service's own and the client's is X-Forwarded-Host", async () => {
    const response = await request(gateway.url).get('/funcao/cabecalhos').set(headers).set('host', 'hub.example');
    const vistos = JSON.parse(response.text).headers as Record<string, string>;
    expect(vistos.host).toBe(new URL(gateway.upstreams.function.url).host);
    expect(vistos['x-forwarded-host']).toBe('hub.example');
  });

  it('When the service resets the connection before answering, then 503 servico_indisponivel with Retry-After', async () => {
    const response = await request(gateway.url).post('/aplicativo/reinicia').set(headers).send({ a: 1 }).expect(503);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.headers['retry-after']).toBe('2');
    expect(response.body).toMatchObject({ status: 503, codigo: 'servico_indisponivel' });
    await request(gateway.url).get('/aplicativo').set(headers).expect(200);
  });

  it('When the client goes away while the service is still answering, then the request to the service is closed too', async () => {
    const path = `/funcao/lento?abandono=${Date.now()}`;
    const head = `GET ${path} HTTP/1.1\r\nHost: gateway\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    const socket = startRawRequest(gateway.url, head, Buffer.alloc(0));
    await waitFor(() => gateway.upstreams.function.started.includes(path), { what: 'the request at the service' });
    socket.destroy();
    await waitFor(() => gateway.upstreams.function.interrupted.includes(path), {
      what: 'the service to see its request closed',
    });
  });

  it('When the client goes away in the middle of a streamed body, then the service sees the request cut, not a short body, and the gateway goes on', async () => {
    const path = `/aplicativo?metade=${Date.now()}`;
    const head = `POST ${path} HTTP/1.1\r\nHost: gateway\r\ncontent-type: application/json\r\ncontent-length: ${GRANDE}\r\n${Object.entries(
      headers,
    )
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    const socket = startRawRequest(gateway.url, head, Buffer.alloc(GRANDE / 2, 'a'));
    await waitFor(() => gateway.upstreams.hubApi.started.includes(path), { what: 'the request at the service' });
    socket.destroy();
    await waitFor(() => gateway.upstreams.hubApi.interrupted.includes(path), {
      what: 'the service to see its request closed',
    });
    expect(gateway.upstreams.hubApi.seen.some((s) => s.url === path)).toBe(false);
    await request(gateway.url).post('/aplicativo').set(headers).send({ depois: true }).expect(200);
  });

  it('When the service answers before a streamed body has arrived (a 401 that does not read it), then the client gets the answer and the gateway stops sending the rest to the service', async () => {
    const path = `/aplicativo/recusa-cedo?lento=${Date.now()}`;
    const head = `POST ${path} HTTP/1.1\r\nHost: gateway\r\ncontent-type: application/json\r\ncontent-length: ${GRANDE}\r\n${Object.entries(
      headers,
    )
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    const socket = startRawRequest(gateway.url, head, Buffer.alloc(100, 'a'));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += String(chunk);
    });
    const seenBefore = gateway.upstreams.hubApi.afterEarlyAnswer.length;
    try {
      await waitFor(() => answer.includes('nao_autenticado'), { what: 'the early 401 at the client' });
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      // The rest of the body, sent by a client that did not stop: none of it reaches the service.
      socket.write(Buffer.alloc(GRANDE - 100, 'b'));
      const atService = await waitFor(() => gateway.upstreams.hubApi.afterEarlyAnswer[seenBefore], {
        what: 'the service to see its request end or close',
      });
      expect(atService).toEqual({ bytes: expect.any(Number), ended: false });
      expect(atService.bytes).toBeLessThan(GRANDE);
    } finally {
      socket.destroy();
    }
  });

  it('When the client goes away in the middle of a small body (read whole first), then the service never sees the request, and the gateway goes on', async () => {
    const path = `/aplicativo?pequeno=${Date.now()}`;
    const head = `POST ${path} HTTP/1.1\r\nHost: gateway\r\ncontent-type: application/json\r\ncontent-length: 2000\r\n${Object.entries(
      headers,
    )
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    const socket = startRawRequest(gateway.url, head, Buffer.alloc(1000, 'a'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    await request(gateway.url).post('/aplicativo').set(headers).send({ depois: true }).expect(200);
    expect(gateway.upstreams.hubApi.started.includes(path)).toBe(false);
    expect(gateway.upstreams.hubApi.seen.some((s) => s.url === path)).toBe(false);
  });

  it('When the service is down (restarting), then 503 servico_indisponivel in problem+json with Retry-After', async () => {
    const other = await gatewayWith();
    await other.upstreams.function.close();
    const response = await request(other.url).get('/funcao').set(headers).set('x-request-id', 'down-1').expect(503);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.headers['x-request-id']).toBe('down-1');
    expect(response.headers['retry-after']).toBe('2');
    expect(response.body).toMatchObject({ status: 503, codigo: 'servico_indisponivel' });
    await request(other.url).get('/auth').set(headers).expect(200);
    await other.close();
  });

  it('When a service is not deployed (GATEWAY_UPSTREAMS), then its routes are 502 without a connection attempt', async () => {
    const other = await gatewayWith({ GATEWAY_UPSTREAMS: 'access,hub-api' });
    const response = await request(other.url).get('/funcao').set(headers).expect(502);
    expect(response.body.codigo).toBe('servico_indisponivel');
    expect(response.headers['retry-after']).toBeUndefined();
    expect(other.upstreams.function.seen).toHaveLength(0);
    await other.close();
  });
});

describe('gateway proxy, one caller', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await gatewayWith({ GATEWAY_BODY_LIMIT: '64kb' });
  });
  afterAll(() => gateway.close());

  it('When a caller sends two requests, then each counts once against its rate-limit budget and in one metrics series', async () => {
    const bearer = { authorization: `Bearer ${await identity.appToken('outra-loja')}` };
    const first = await request(gateway.url).get('/auth').set(bearer).expect(200);
    const second = await request(gateway.url).get('/auth').set(bearer).expect(200);
    const remaining = (r: request.Response) => Number(/r=(\d+)/.exec(String(r.headers.ratelimit))![1]);
    expect(remaining(first) - remaining(second)).toBe(1);
    expect(second.headers['ratelimit-policy']).toMatch(/^"aplicativo";q=\d+;w=60$/);
    const metrics = await request(gateway.metricsUrl).get('/metrics').expect(200);
    expect(metrics.text).toMatch(
      /gateway_http_request_duration_seconds_count\{upstream="access",method="GET",status="200"\} \d+/,
    );
  });
});
