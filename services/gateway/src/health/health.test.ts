import { waitFor } from '@hub/testing';
import request from 'supertest';
import { readConfig } from '../config';
import { type GatewayUnderTest, startGatewayWithFakes } from '../testing/gateway.test-support';
import { rawGet } from '../testing/raw-request.test-support';

describe('gateway health', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithFakes();
  });
  afterAll(() => gateway.close());

  it('When asked /saude, then the gateway answers itself', async () => {
    const response = await request(gateway.url).get('/saude').expect(200);
    expect(response.body).toEqual({ situacao: 'ok', servico: 'gateway' });
  });

  it('When every service is ready, then /saude/prontidao is 200 and lists each', async () => {
    const response = await request(gateway.url).get('/saude/prontidao').expect(200);
    expect(response.body).toEqual({
      situacao: 'ok',
      servico: 'gateway',
      dependencias: { access: 'ok', function: 'ok', 'hub-api': 'ok' },
    });
  });

  it('When one service is not ready, then /saude/prontidao is 503 and names it, within PRONTIDAO_CACHE_MS', async () => {
    gateway.upstreams.hubApi.ready = false;
    try {
      const response = await waitFor(async () => {
        const r = await request(gateway.url).get('/saude/prontidao');
        return r.status === 503 ? r : undefined;
      });
      expect(response.body.situacao).toBe('indisponivel');
      expect(response.body.dependencias).toEqual({ access: 'ok', function: 'ok', 'hub-api': 'falha: respondeu 503' });
    } finally {
      gateway.upstreams.hubApi.ready = true;
    }
  });

  it('When /saude/prontidao is flooded from one address, then the services are asked once per round and the address gets 429', async () => {
    const other = await startGatewayWithFakes({ RATE_LIMIT_PER_MINUTE: '100' });
    const answers = await Promise.all(
      Array.from({ length: 350 }, () =>
        request(other.url)
          .get('/saude/prontidao')
          .then((r) => r.status),
      ),
    );
    expect(answers.filter((s) => s === 200).length).toBe(100);
    expect(answers.filter((s) => s === 429).length).toBe(250);
    // Every request of the flood came within a few rounds of PRONTIDAO_CACHE_MS: a handful of checks, not 350.
    expect(other.upstreams.access.readinessAsked).toBeLessThan(10);
    const refused = await request(other.url).get('/saude/prontidao').expect(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.headers['content-type']).toContain('application/problem+json');
    // Liveness is the gateway's own and never fans out: not limited.
    await request(other.url).get('/saude').expect(200);
    await other.close();
  });

  it('When one service is down, then /saude/prontidao is 503 without revealing its address', async () => {
    const other = await startGatewayWithFakes();
    await other.upstreams.access.close();
    const response = await request(other.url).get('/saude/prontidao').expect(503);
    expect(response.body.dependencias.access).toBe('falha: inacessivel');
    expect(JSON.stringify(response.body)).not.toContain('127.0.0.1');
    await other.close();
  });

  it('When a service is not deployed (GATEWAY_UPSTREAMS), then readiness ignores it', async () => {
    const other = await startGatewayWithFakes({ GATEWAY_UPSTREAMS: 'access' });
    other.upstreams.function.ready = false;
    const response = await request(other.url).get('/saude/prontidao').expect(200);
    expect(response.body.dependencias).toEqual({ access: 'ok' });
    await other.close();
  });
});

describe('gateway metrics', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithFakes();
  });
  afterAll(() => gateway.close());

  it('When requests went through, then the metrics port shows their durations per upstream and status', async () => {
    await request(gateway.url).get('/auth/acesso').expect(200);
    await request(gateway.url).get('/nada').expect(404);
    const response = await request(gateway.metricsUrl).get('/metrics').expect(200);
    expect(response.headers['content-type']).toContain('text/plain');
    expect(response.text).toContain(
      'gateway_http_request_duration_seconds_count{upstream="access",method="GET",status="200"} 1',
    );
    expect(response.text).toContain(
      'gateway_http_request_duration_seconds_count{upstream="gateway",method="GET",status="404"} 1',
    );
    expect(response.text).toContain('nodejs_eventloop_delay_seconds{quantile="0.99"}');
  });

  it.each([
    '/metrics',
    '/metrics/',
    '/METRICS',
    '/auth/../metrics',
    '/aplicativo/%2e%2e/metrics',
    '/funcao/%2E%2E/Metrics',
  ])('When %s is asked on the public port, then 404 problem+json and no service is asked', async (path) => {
    const seenBefore = Object.values(gateway.upstreams).map((u) => u.seen.length);
    const response = await rawGet(gateway.url, path);
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(response.body).codigo).toBe('rota_inexistente');
    expect(response.body).not.toContain('gateway_http_request_duration_seconds');
    expect(Object.values(gateway.upstreams).map((u) => u.seen.length)).toEqual(seenBefore);
  });

  it('When the metrics port is asked anything but /metrics, then 404 problem+json', async () => {
    const response = await request(gateway.metricsUrl).get('/auth/acesso').expect(404);
    expect(response.headers['content-type']).toContain('application/problem+json');
  });

  it('When nothing is configured, then the metrics port is 9080 on 127.0.0.1', () => {
    const config = readConfig({ HUB_AMBIENTE: 'LOCALHOST' });
    expect(config.GATEWAY_METRICS_PORT).toBe(9080);
    expect(config.GATEWAY_METRICS_HOST).toBe('127.0.0.1');
  });
});
