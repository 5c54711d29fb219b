import { waitFor } from '@hub/testing';
import request from 'supertest';
import { type FakeUpstream, startFakeUpstream } from '../testing/fake-upstream.test-support';
import { type GatewayUnderTest, readinessOnce, startGatewayWithFakes } from '../testing/gateway.test-support';
import { INTEIRO_ATE } from './proxy';

/** hub-api as two instances behind the gateway (HUB_API_URL with two URLs). */
describe('gateway in front of several instances of a service', () => {
  let segunda: FakeUpstream;
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    segunda = await startFakeUpstream('hub-api');
    gateway = await startGatewayWithFakes({}, {}, { hubApiExtra: [segunda.url] });
  });
  afterAll(async () => {
    await gateway.close();
    await segunda.close().catch(() => undefined);
  });

  it('When both instances run, then requests are spread over them in turn', async () => {
    const antes = [gateway.upstreams.hubApi.seen.length, segunda.seen.length];
    for (let i = 0; i < 10; i += 1) await request(gateway.url).get(`/evento?i=${i}`).expect(200);
    expect([gateway.upstreams.hubApi.seen.length - antes[0]!, segunda.seen.length - antes[1]!]).toEqual([5, 5]);
  });

  it('When one instance is not ready, then the gateway is still ready; when none is, it is not', async () => {
    segunda.ready = false;
    // Once a round of checks has asked the second instance since, the answer is the services' now.
    const asked = segunda.readinessAsked;
    await waitFor(async () => (await request(gateway.url).get('/saude/prontidao')) && segunda.readinessAsked > asked);
    expect((await request(gateway.url).get('/saude/prontidao')).status).toBe(200);
    gateway.upstreams.hubApi.ready = false;
    const nenhuma = await readinessOnce(gateway.url, 503);
    expect(nenhuma.body.dependencias['hub-api']).toMatch(/^falha/);
    segunda.ready = true;
    gateway.upstreams.hubApi.ready = true;
  });

  it('When one instance is down, then every request without a body or with a small one is answered by the other, and one with a streamed body gets 503 with Retry-After or the other', async () => {
    await segunda.close();
    for (let i = 0; i < 6; i += 1) {
      const response = await request(gateway.url).get(`/evento?queda=${i}`);
      expect({ i, status: response.status }).toEqual({ i, status: 200 });
    }
    // A small body is read whole before it is sent (INTEIRO_ATE): it goes to the other instance.
    for (let i = 0; i < 4; i += 1) {
      const response = await request(gateway.url).post('/eventos').send({ i });
      expect({ i, status: response.status }).toEqual({ i, status: 200 });
    }
    const statuses = [];
    const grande = { dados: 'x'.repeat(INTEIRO_ATE) };
    for (let i = 0; i < 4; i += 1) {
      const response = await request(gateway.url)
        .post('/eventos')
        .send({ i, ...grande });
      statuses.push(response.status === 503 ? `503 ${response.headers['retry-after']}` : String(response.status));
    }
    // A streamed body is not sent twice: the request that met the dead instance is a 503 the client retries.
    expect(statuses.filter((s) => s === '200').length).toBeGreaterThanOrEqual(2);
    expect(statuses.every((s) => s === '200' || s === '503 2')).toBe(true);
  });
});
