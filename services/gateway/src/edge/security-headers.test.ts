import { startTestIdentity, type TestIdentity } from '@hub/testing';
import request from 'supertest';
import { type GatewayUnderTest, startGatewayWithFakes } from '../testing/gateway.test-support';
import { API_POLICY, PANEL_POLICY } from './security-headers';

let identity: TestIdentity;
beforeAll(async () => {
  identity = await startTestIdentity();
});
afterAll(() => identity.close());

const common = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

describe('security headers of the gateway', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithFakes(identity.env);
  });
  afterAll(() => gateway.close());

  it("When the API answers (a service's route, a 404, health, a preflight, a refusal), then CSP default-src 'none' and frame-ancestors 'none', nosniff, DENY and no-referrer", async () => {
    const answers = [
      await request(gateway.url).get('/aplicativo'),
      await request(gateway.url).get('/nao-existe'),
      await request(gateway.url).get('/saude'),
      await request(gateway.url)
        .options('/evento')
        .set('origin', 'http://localhost:5173')
        .set('access-control-request-method', 'POST'),
      await request(gateway.url).post('/eventos').set('content-type', 'application/json').send('{"a":'),
      await request(gateway.url).get('/openapi.json'),
    ];
    expect(answers.map((a) => a.status)).not.toContain(500);
    for (const answer of answers) {
      expect(answer.headers).toMatchObject({ 'content-security-policy': API_POLICY, ...common });
      // A developer's machine (LOCALHOST) answers on plain http: no HSTS there.
      expect(answer.headers['strict-transport-security']).toBeUndefined();
    }
    expect(API_POLICY).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it("When /painel or /portal is asked, then the panel's policy: scripts, styles and requests from the gateway itself only, no inline script, never framed", async () => {
    for (const path of ['/painel/', '/painel/eventos', '/painel/ambiente.json', '/portal/', '/portal/assinaturas']) {
      const answer = await request(gateway.url).get(path);
      expect(answer.headers).toMatchObject({ 'content-security-policy': PANEL_POLICY, ...common });
    }
    const directives = new Map(PANEL_POLICY.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('style-src')).toEqual(["'self'"]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  });

  it('When /docs is asked, then its own policy stays (Swagger UI needs inline styles), with the other headers', async () => {
    const answer = await request(gateway.url).get('/docs').expect(200);
    expect(answer.headers['content-security-policy']).toMatch(/^default-src 'none'; script-src 'self';/);
    expect(answer.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(answer.headers).toMatchObject(common);
  });

  it('When /docs starts Swagger UI, then the bearer token is kept in memory, never persisted in localStorage', async () => {
    const init = (await request(gateway.url).get('/docs/init.js').expect(200)).text;
    const options = new Function('SwaggerUIBundle', 'window', `${init}; return window.ui;`)(
      Object.assign((o: object) => o, { presets: { apis: 'apis' } }),
      {},
    );
    expect(options).toMatchObject({ url: '/openapi.json', persistAuthorization: false });
    expect(init).not.toMatch(/localStorage/);
  });
});

describe('security headers outside LOCALHOST', () => {
  it.each(['SANDBOX', 'PRODUCTION'])(
    'When HUB_AMBIENTE is %s, then every answer carries Strict-Transport-Security for a year',
    async (ambiente) => {
      const gateway = await startGatewayWithFakes({ ...identity.env, HUB_AMBIENTE: ambiente });
      try {
        for (const path of ['/aplicativo', '/painel/', '/docs', '/saude']) {
          const answer = await request(gateway.url).get(path);
          expect(answer.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
        }
      } finally {
        await gateway.close();
      }
    },
  );
});
