import path from 'node:path';
import { type SpawnedService, spawnService, waitFor } from '@hub/testing';
import request from 'supertest';

describe('gateway main', () => {
  let service: SpawnedService;
  afterAll(async () => {
    await service?.stop();
  });

  it('When the gateway runs from main, then /metrics answers on its own loopback port and 404 on the public one', async () => {
    // HOST opens the public port to every interface; the metrics port must stay on loopback regardless.
    service = spawnService(path.join(__dirname, 'main.ts'), {
      HOST: '0.0.0.0',
      GATEWAY_PORT: '0',
      GATEWAY_METRICS_PORT: '0',
      GATEWAY_UPSTREAMS: '',
    });
    const publicUrl = await service.url('gateway');
    const metricsUrl = await waitFor(() => /"metrics":"(http:\/\/[^"]+)\/metrics"/.exec(service.output())?.[1], {
      what: 'the metrics URL in the log',
    });
    expect(new URL(metricsUrl).hostname).toBe('127.0.0.1');
    expect(new URL(publicUrl).hostname).toBe('0.0.0.0');

    await request(publicUrl).get('/saude').expect(200);
    const metrics = await request(metricsUrl).get('/metrics').expect(200);
    expect(metrics.text).toContain(
      'gateway_http_request_duration_seconds_count{upstream="gateway",method="GET",status="200"} 1',
    );
    const hidden = await request(publicUrl).get('/metrics').expect(404);
    expect(hidden.body.codigo).toBe('rota_inexistente');
    expect(await service.stop()).toBe(0);
  });
});
