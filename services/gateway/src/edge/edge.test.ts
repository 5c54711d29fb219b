import request from 'supertest';
import { type GatewayUnderTest, startGatewayWithFakes } from '../testing/gateway.test-support';

describe('gateway edge: CORS and rate limit', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithFakes({
      CORS_ORIGINS: 'https://painel.empresa.com.br, http://localhost:5173',
      RATE_LIMIT_PER_MINUTE: '5',
    });
  });
  afterAll(() => gateway.close());

  it('When a listed origin sends a preflight, then 204 with the allowed methods and headers, and no service is asked', async () => {
    const response = await request(gateway.url)
      .options('/auth')
      .set('origin', 'https://painel.empresa.com.br')
      .set('access-control-request-method', 'PATCH')
      .set('access-control-request-headers', 'authorization, content-type')
      .expect(204);
    expect(response.headers['access-control-allow-origin']).toBe('https://painel.empresa.com.br');
    expect(response.headers['access-control-allow-methods']).toContain('PATCH');
    expect(response.headers['access-control-allow-headers']).toBe('authorization, content-type');
    expect(response.headers['access-control-max-age']).toBeDefined();
    expect(response.headers.vary).toContain('Origin');
    expect(gateway.upstreams.access.seen).toHaveLength(0);
  });

  it('When an unlisted origin sends a preflight, then no CORS permission is granted', async () => {
    const response = await request(gateway.url)
      .options('/auth')
      .set('origin', 'https://evil.example')
      .set('access-control-request-method', 'DELETE')
      .expect(204);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('When a listed origin makes a request, then the answer allows it and exposes x-request-id', async () => {
    const response = await request(gateway.url).get('/auth').set('origin', 'http://localhost:5173').expect(200);
    expect(response.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(response.headers['access-control-expose-headers']).toContain('x-request-id');
  });

  it('When CORS_ORIGINS is unset in LOCALHOST, then every origin is allowed with *', async () => {
    const other = await startGatewayWithFakes();
    const response = await request(other.url)
      .options('/aplicativo')
      .set('origin', 'http://anything:3000')
      .set('access-control-request-method', 'POST')
      .expect(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    await other.close();
  });

  it('When a client passes its requests per minute, then 429 muitas_requisicoes with Retry-After, and health stays open', async () => {
    const client = request(gateway.url);
    // Preflights are answered before the limiter and do not count; requests do.
    let status = 200;
    let last: request.Response | undefined;
    for (let i = 0; i < 10 && status !== 429; i++) {
      last = await client.get('/funcao');
      status = last.status;
    }
    expect(status).toBe(429);
    expect(last!.headers['content-type']).toContain('application/problem+json');
    expect(last!.body.codigo).toBe('muitas_requisicoes');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expect(last!.headers['x-request-id']).toBeDefined();
    await client.get('/saude').expect(200);
  });
});
