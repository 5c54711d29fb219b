import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { type GatewayUnderTest, startGatewayWithFakes } from '../testing/gateway';

/** Sends a chunked body (no Content-Length) of `size` bytes and resolves with the status and body. */
function sendChunked(
  url: string,
  path: string,
  size: number,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
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

describe('gateway proxy', () => {
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    gateway = await startGatewayWithFakes({ GATEWAY_BODY_LIMIT: '64kb' });
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
    ['/.well-known/jwks.json', 'hub-api'],
  ])('When GET %s, then the %s service answers it with the path and query intact', async (path, servico) => {
    const response = await request(gateway.url).get(path).expect(200);
    expect(response.body).toMatchObject({ servico, url: path });
  });

  it('When a path belongs to no service, then 404 rota_inexistente without reaching any', async () => {
    const before = Object.values(gateway.upstreams).reduce((n, u) => n + u.seen.length, 0);
    const response = await request(gateway.url).get('/authx').expect(404);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.body.codigo).toBe('rota_inexistente');
    expect(Object.values(gateway.upstreams).reduce((n, u) => n + u.seen.length, 0)).toBe(before);
  });

  it('When the caller sends a sane x-request-id, then the service receives it and the caller gets it back', async () => {
    const response = await request(gateway.url).get('/auth').set('x-request-id', 'pedido-123.abc').expect(200);
    expect(response.body.request_id).toBe('pedido-123.abc');
    expect(response.headers['x-request-id']).toBe('pedido-123.abc');
  });

  it('When the caller sends no or an unsafe x-request-id, then the gateway makes one and passes it both ways', async () => {
    const response = await request(gateway.url).get('/auth').set('x-request-id', 'bad id <script>').expect(200);
    const id = response.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.request_id).toBe(id);
  });

  it('When a body under the limit is posted, then the service receives all of it with forwarding headers', async () => {
    const body = { dados: 'x'.repeat(10_000) };
    const response = await request(gateway.url).post('/aplicativo').send(body).expect(200);
    expect(response.body.bodyBytes).toBe(JSON.stringify(body).length);
    const seen = gateway.upstreams.hubApi.seen.at(-1)!;
    expect(seen.headers['x-forwarded-for']).toBeDefined();
  });

  it('When the declared Content-Length is over the limit, then 413 corpo_grande_demais and the service sees nothing', async () => {
    const before = gateway.upstreams.hubApi.seen.length;
    const response = await request(gateway.url)
      .post('/aplicativo')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ dados: 'x'.repeat(100 * 1024) }))
      .expect(413);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.body.codigo).toBe('corpo_grande_demais');
    expect(gateway.upstreams.hubApi.seen.length).toBe(before);
  });

  it('When a chunked body grows past the limit, then 413 corpo_grande_demais and the service sees nothing', async () => {
    const before = gateway.upstreams.hubApi.seen.length;
    const response = await sendChunked(gateway.url, '/aplicativo', 200 * 1024);
    expect(response.status).toBe(413);
    expect(response.body.codigo).toBe('corpo_grande_demais');
    expect(gateway.upstreams.hubApi.seen.length).toBe(before);
  });

  it('When a chunked body stays under the limit, then the service receives it whole', async () => {
    const response = await sendChunked(gateway.url, '/aplicativo', 60 * 1024);
    expect(response.status).toBe(200);
    expect(response.body.bodyBytes).toBe(60 * 1024);
  });

  it('When the service does not answer in time, then 504 tempo_esgotado with Retry-After', async () => {
    const other = await startGatewayWithFakes({ GATEWAY_UPSTREAM_TIMEOUT: '200ms' });
    const response = await request(other.url).get('/funcao/lento').expect(504);
    expect(response.body.codigo).toBe('tempo_esgotado');
    expect(response.headers['retry-after']).toBe('2');
    await other.close();
  });

  it('When the service dies in the middle of its response, then the client connection is cut rather than left waiting', async () => {
    const outcome = await new Promise<string>((resolve) => {
      httpRequest(`${gateway.url}/funcao/quebra`, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve('complete'));
        res.on('error', () => resolve('cut'));
        res.on('aborted', () => resolve('cut'));
      })
        .on('error', () => resolve('cut'))
        .end();
    });
    expect(outcome).toBe('cut');
  });

  it('When the service is down (restarting), then 503 servico_indisponivel in problem+json with Retry-After', async () => {
    const other = await startGatewayWithFakes();
    await other.upstreams.function.close();
    const response = await request(other.url).get('/funcao').set('x-request-id', 'down-1').expect(503);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.headers['x-request-id']).toBe('down-1');
    expect(response.headers['retry-after']).toBe('2');
    expect(response.body).toMatchObject({ status: 503, codigo: 'servico_indisponivel' });
    await request(other.url).get('/auth').expect(200);
    await other.close();
  });

  it('When a service is not deployed (GATEWAY_UPSTREAMS), then its routes are 502 without a connection attempt', async () => {
    const other = await startGatewayWithFakes({ GATEWAY_UPSTREAMS: 'access,hub-api' });
    const response = await request(other.url).get('/funcao').expect(502);
    expect(response.body.codigo).toBe('servico_indisponivel');
    expect(response.headers['retry-after']).toBeUndefined();
    expect(other.upstreams.function.seen).toHaveLength(0);
    await other.close();
  });
});
