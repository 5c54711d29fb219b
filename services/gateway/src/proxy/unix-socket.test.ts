import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { readConfig } from '../config';
import { instanceOf } from '../routes';
import { type FakeUpstream, startFakeUpstream } from '../testing/fake-upstream.test-support';
import { type GatewayUnderTest, readinessOnce, startGatewayWithFakes } from '../testing/gateway.test-support';
import { INTEIRO_ATE } from './proxy';

/** hub-api on the gateway's host, reached on its Unix socket (HUB_API_URL=unix:/…), as `pnpm start` runs them. */
describe('gateway to a service on a Unix socket', () => {
  let dir: string;
  let socket: string;
  let local: FakeUpstream;
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'hub-gw-sock-'));
    socket = path.join(dir, 'hub-api.sock');
    local = await startFakeUpstream('hub-api', [], { socket });
    gateway = await startGatewayWithFakes({ HUB_API_URL: `unix:${socket}` });
  });
  afterAll(async () => {
    await gateway.close();
    await local.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('When a request is for the service, then it arrives on the socket with its path, query, headers and body, and the answer comes back', async () => {
    const antes = local.seen.length;
    const lida = await request(gateway.url).get('/evento?pagina=2').set('x-teste', 'sim');
    expect(lida.status).toBe(200);
    const publicada = await request(gateway.url).post('/eventos').send({ dados: 'pequeno' });
    expect(publicada.status).toBe(200);
    // Over INTEIRO_ATE the body streams instead of being read whole first.
    const grande = await request(gateway.url)
      .post('/eventos')
      .send({ dados: 'g'.repeat(INTEIRO_ATE * 2) });
    expect(grande.status).toBe(200);
    const vistas = local.seen.slice(antes);
    expect(vistas.map((v) => `${v.method} ${v.url}`)).toEqual([
      'GET /evento?pagina=2',
      'POST /eventos',
      'POST /eventos',
    ]);
    expect(vistas[0]!.headers['x-teste']).toBe('sim');
    expect(vistas[0]!.headers['x-request-id']).toBe(lida.headers['x-request-id']);
    expect(vistas[2]!.bodyBytes).toBeGreaterThan(INTEIRO_ATE * 2);
    // The fake hub-api on the TCP port got none of them.
    expect(gateway.upstreams.hubApi.seen).toEqual([]);
  });

  it('When the service on the socket is ready, then so is the gateway; when it is not, the gateway says so', async () => {
    await readinessOnce(gateway.url, 200);
    local.ready = false;
    const pronta = await readinessOnce(gateway.url, 503);
    local.ready = true;
    expect(pronta.body.dependencias['hub-api']).toBe('falha: respondeu 503');
  });

  it('When the service has stopped (its socket file gone), then a request is 503 with Retry-After, readiness says unreachable, and a second instance answers instead', async () => {
    const outra = await startFakeUpstream('hub-api', [], { socket: path.join(dir, 'outra.sock') });
    const duas = await startGatewayWithFakes({ HUB_API_URL: `unix:${socket},unix:${outra.socket}` });
    try {
      await local.close();
      const sozinha = await startGatewayWithFakes({ HUB_API_URL: `unix:${socket}` });
      try {
        const parada = await request(sozinha.url).get('/evento');
        expect(parada.status).toBe(503);
        expect(parada.headers['retry-after']).toBe('2');
        expect(parada.body.codigo).toBe('servico_indisponivel');
        const pronta = await readinessOnce(sozinha.url, 503);
        expect(pronta.body.dependencias['hub-api']).toBe('falha: inacessivel');
      } finally {
        await sozinha.close();
      }
      for (let i = 0; i < 4; i += 1) {
        const respondida = await request(duas.url).post('/eventos').send({ i });
        expect({ i, status: respondida.status }).toEqual({ i, status: 200 });
      }
      expect(outra.seen.filter((v) => v.method === 'POST')).toHaveLength(4);
      await readinessOnce(duas.url, 200);
    } finally {
      await duas.close();
      await outra.close();
    }
  });
});

describe('gateway configuration of a service on a Unix socket', () => {
  it('When an instance URL names no socket path, then it is not taken for TCP to localhost', () => {
    expect(() => instanceOf('unix:')).toThrow('unix: names no socket path');
  });

  const base = { HUB_AMBIENTE: 'LOCALHOST' };

  it('When an instance is unix: with an absolute path, then it is taken, beside http ones', () => {
    const config = readConfig({ ...base, HUB_API_URL: 'unix:/run/hub/hub-api.sock, http://10.0.0.7:8083' });
    expect(config.HUB_API_URL).toBe('unix:/run/hub/hub-api.sock, http://10.0.0.7:8083');
  });

  it.each([
    ['unix:run/hub-api.sock', 'must be an absolute path (it starts with /)'],
    [`unix:/${'d'.repeat(120)}.sock`, 'a Unix socket path holds 107 at most'],
    ['nada', 'is not a URL'],
    // The instance list drops a URL's trailing slashes: these would leave `unix:` with no path, which
    // undici takes for "no socket" and dials the placeholder origin, TCP localhost:80.
    ['unix:/', 'names a directory (it ends with /)'],
    ['unix:///', 'names a directory (it ends with /)'],
    ['unix:/run/hub/', 'names a directory (it ends with /)'],
    // Valid URLs of another scheme passed, and the gateway then failed to start with "Invalid URL".
    ['UNIX:/run/hub/hub-api.sock', 'is neither http(s):// nor unix:'],
    ['file:///run/hub/hub-api.sock', 'is neither http(s):// nor unix:'],
    ['ftp://10.0.0.7:8083', 'is neither http(s):// nor unix:'],
  ])('When an instance is %s, then the configuration is refused and says why', (url, why) => {
    expect(() => readConfig({ ...base, HUB_API_URL: url })).toThrow(why);
  });
});
