import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { listen, problemHandler, type RunningServer, routeNotFound } from '@hub/http';
import { createLogger } from '@hub/log';
import { startTestIdentity, type TestIdentity } from '@hub/testing';
import express from 'express';
import request from 'supertest';
import { type GatewayUnderTest, startGatewayWithFakes } from '../testing/gateway.test-support';
import { type PanelOptions, panelRouter } from './panel.routes';

const decodeJwt = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());

async function serve(options: PanelOptions): Promise<RunningServer> {
  const app = express();
  app.use(panelRouter(options));
  app.use(routeNotFound);
  app.use(problemHandler(createLogger('gateway')));
  return listen(app, 0);
}

describe('the panel at /painel/', () => {
  let built: string;
  let empty: string;
  let identity: TestIdentity;
  const servers: RunningServer[] = [];
  const started = async (options: PanelOptions) => {
    const server = await serve(options);
    servers.push(server);
    return server.url;
  };

  beforeAll(async () => {
    built = await mkdtemp(path.join(tmpdir(), 'panel-built-'));
    empty = await mkdtemp(path.join(tmpdir(), 'panel-empty-'));
    await mkdir(path.join(built, 'assets'));
    await writeFile(path.join(built, 'index.html'), '<!doctype html><title>Painel</title><div id="app"></div>');
    await writeFile(
      path.join(built, 'portal.html'),
      '<!doctype html><title>Portal do assinante</title><div id="app"></div>',
    );
    await writeFile(path.join(built, 'assets', 'index-AbC123.js'), 'console.log("painel")');
    identity = await startTestIdentity();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await identity.close();
    await rm(built, { recursive: true, force: true });
    await rm(empty, { recursive: true, force: true });
  });

  it('When the panel is built, then /painel/ and any deep link answer its index.html, never cached', async () => {
    const url = await started({ dir: built, ambiente: 'LOCALHOST' });
    for (const route of ['/painel/', '/painel/eventos', '/painel/eventos/0193a000-0000-7000-8000-000000000001']) {
      const response = await request(url).get(route).expect(200);
      expect(response.type).toBe('text/html');
      expect(response.text).toContain('<div id="app">');
      expect(response.headers['cache-control']).toBe('no-cache');
    }
    await request(url).get('/painel').expect(301).expect('location', '/painel/');
  });

  it('When the portal is asked, then /portal/ and any path under it answer portal.html, never cached; /portal redirects', async () => {
    const url = await started({ dir: built, ambiente: 'LOCALHOST' });
    for (const route of ['/portal/', '/portal/assinaturas']) {
      const response = await request(url).get(route).expect(200);
      expect(response.type).toBe('text/html');
      expect(response.text).toContain('<title>Portal do assinante</title>');
      expect(response.headers['cache-control']).toBe('no-cache');
    }
    await request(url).get('/portal').expect(301).expect('location', '/portal/');
    const naoConstruido = await started({ dir: empty, ambiente: 'LOCALHOST' });
    expect((await request(naoConstruido).get('/portal/')).body.codigo).toBe('painel_nao_construido');
  });

  it('When a hashed asset is asked, then it is cached for a year; a missing one is a 404 problem, not the page', async () => {
    const url = await started({ dir: built, ambiente: 'LOCALHOST' });
    const asset = await request(url).get('/painel/assets/index-AbC123.js').expect(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const missing = await request(url).get('/painel/assets/index-gone.js').expect(404);
    expect(missing.type).toBe('application/problem+json');
    expect(missing.body.codigo).toBe('nao_encontrado');
  });

  it('When the panel is not built, then /painel/ answers 503 saying to run the build', async () => {
    const url = await started({ dir: empty, ambiente: 'LOCALHOST' });
    for (const route of ['/painel/', '/painel/resumo', '/painel/assets/index-AbC123.js']) {
      const response = await request(url).get(route).expect(503);
      expect(response.type).toBe('application/problem+json');
      expect(response.body).toMatchObject({ status: 503, codigo: 'painel_nao_construido' });
      expect(response.body.detail).toContain('pnpm build');
    }
  });

  it('When a person signs in on LOCALHOST, then the gateway returns the token identity-dev issued', async () => {
    const url = await started({ dir: built, ambiente: 'LOCALHOST', identityTokenUrl: `${identity.url}/token` });
    expect((await request(url).get('/painel/ambiente.json').expect(200)).body).toEqual({
      ambiente: 'LOCALHOST',
      entrar: true,
    });
    const response = await request(url)
      .post('/painel/entrar')
      .send({ email: 'ana@empresa.com.br', nome: 'Ana', master: true })
      .expect(200);
    expect(response.body.token_type).toBe('Bearer');
    expect(decodeJwt(response.body.access_token)).toMatchObject({ email: 'ana@empresa.com.br', master: true });
  });

  it('When the sign-in body is wrong, then 400 and no token', async () => {
    const url = await started({ dir: built, ambiente: 'LOCALHOST', identityTokenUrl: `${identity.url}/token` });
    const wrong = await request(url).post('/painel/entrar').send({ email: 7 }).expect(400);
    expect(wrong.body.codigo).toBe('corpo_invalido');
    const malformed = await request(url)
      .post('/painel/entrar')
      .set('content-type', 'application/json')
      .send('{"email":');
    expect(malformed.status).toBe(400);
    expect(malformed.type).toBe('application/problem+json');
  });

  it('When the identity service does not answer, then 502 identidade_indisponivel', async () => {
    const url = await started({ dir: built, ambiente: 'LOCALHOST', identityTokenUrl: 'http://127.0.0.1:9/token' });
    const response = await request(url).post('/painel/entrar').send({ email: 'ana@empresa.com.br' }).expect(502);
    expect(response.body.codigo).toBe('identidade_indisponivel');
  });

  it.each(['SANDBOX', 'PRODUCTION'] as const)(
    'When the platform is %s, then there is no sign-in route: nobody who reaches the gateway mints a token, master or not',
    async (ambiente) => {
      const url = await started({ dir: built, ambiente, identityTokenUrl: `${identity.url}/token` });
      expect((await request(url).get('/painel/ambiente.json').expect(200)).body).toEqual({ ambiente, entrar: false });
      for (const body of [{ email: 'ana@empresa.com.br', master: true }, { email: 'ana@empresa.com.br' }]) {
        const response = await request(url).post('/painel/entrar').send(body).expect(404);
        expect(response.body.access_token).toBeUndefined();
      }
    },
  );

  it('When the gateway runs in SANDBOX, then POST /painel/entrar is not there either', async () => {
    const sandbox = await startGatewayWithFakes({ ...identity.env, HUB_AMBIENTE: 'SANDBOX' });
    try {
      const response = await request(sandbox.url)
        .post('/painel/entrar')
        .send({ email: 'x@empresa.com.br', master: true });
      expect(response.status).toBe(404);
      expect(response.body.access_token).toBeUndefined();
      for (const upstream of Object.values(sandbox.upstreams)) expect(upstream.seen).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  describe('through the gateway', () => {
    let gateway: GatewayUnderTest;
    beforeAll(async () => {
      gateway = await startGatewayWithFakes({ IDENTITY_JWKS_URL: identity.jwksUrl });
    });
    afterAll(() => gateway.close());

    it("When the gateway runs, then it signs in through identity-dev's /token and never sends /painel to a service", async () => {
      const response = await request(gateway.url).post('/painel/entrar').send({ email: 'bia@empresa.com.br' });
      expect(response.status).toBe(200);
      expect(decodeJwt(response.body.access_token).email).toBe('bia@empresa.com.br');
      const page = await request(gateway.url).get('/painel/eventos');
      expect([200, 503]).toContain(page.status);
      for (const upstream of Object.values(gateway.upstreams)) expect(upstream.seen).toEqual([]);
    });
  });
});
