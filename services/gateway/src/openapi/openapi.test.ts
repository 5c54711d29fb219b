import type { RouteSpec } from '@hub/http';
import request from 'supertest';
import { z } from 'zod';
import { type GatewayUnderTest, startGatewayWithFakes } from '../testing/gateway';

const accessSpecs: RouteSpec[] = [
  {
    method: 'get',
    path: '/auth/acesso',
    summary: 'The caller’s own access',
    tag: 'auth',
    response: z.object({ id: z.string(), email: z.string(), perfil_acesso: z.string().nullable().optional() }),
  },
  {
    method: 'post',
    path: '/auth',
    summary: 'Create an access',
    tag: 'auth',
    permission: 'colaboradores.criar',
    body: z.object({ email: z.string().max(160), perfil: z.literal('colaborador') }),
    response: z.object({ id: z.string() }),
    status: 201,
  },
  // Served by the access service but not routed by the gateway: it must not be documented.
  { method: 'get', path: '/interno/fila', summary: 'Internal', tag: 'interno' },
];
const functionSpecs: RouteSpec[] = [
  {
    method: 'get',
    path: '/funcao',
    summary: 'List functions',
    tag: 'funcao',
    permission: 'master',
    query: z.object({ pagina: z.coerce.number().optional() }),
  },
];
const hubSpecs: RouteSpec[] = [
  {
    method: 'get',
    path: '/aplicativo/:id',
    summary: 'One event',
    tag: 'evento',
    permission: 'monitoramento.ler',
    params: z.object({ id: z.uuid() }),
  },
  {
    method: 'get',
    path: '/.well-known/jwks.json',
    summary: 'Signing keys',
    tag: 'chave-de-assinatura',
    authenticated: false,
  },
];

describe('gateway OpenAPI and docs', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithFakes(
      {
        HUB_AMBIENTE: 'SANDBOX',
        IDENTITY_JWKS_URL: 'https://identidade.example/.well-known/jwks.json',
        IDENTITY_ISSUER: 'https://identidade.example',
        GATEWAY_SANDBOX_URL: 'https://sandbox.hub.example',
        GATEWAY_PRODUCTION_URL: 'https://hub.example',
      },
      { access: accessSpecs, function: functionSpecs, hubApi: hubSpecs },
    );
  });
  afterAll(() => gateway.close());

  it('When /openapi.json is asked, then the documents of every service are merged with the contract version and servers', async () => {
    const response = await request(gateway.url).get('/openapi.json').expect(200);
    const document = response.body;
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('0.1.16');
    expect(Object.keys(document.paths).sort()).toEqual([
      '/.well-known/jwks.json',
      '/aplicativo/{id}',
      '/auth',
      '/auth/acesso',
      '/funcao',
    ]);
    expect(document.paths['/auth'].post.description).toBe('Requires: colaboradores.criar');
    expect(document.tags.map((t: { name: string }) => t.name)).toEqual([
      'auth',
      'chave-de-assinatura',
      'evento',
      'funcao',
    ]);
    expect(document.servers).toEqual([
      { url: 'https://sandbox.hub.example', description: 'SANDBOX' },
      { url: 'http://localhost:8080', description: 'LOCALHOST' },
      { url: 'https://hub.example', description: 'PRODUCTION' },
    ]);
  });

  it('When /docs is asked, then a self-contained page lists tags and operations with permissions and schemas', async () => {
    const response = await request(gateway.url).get('/docs').expect(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.headers['content-security-policy']).toContain("default-src 'none'");
    const html = response.text;
    expect(html).toContain('0.1.16');
    for (const text of [
      '/auth/acesso',
      '/aplicativo/{id}',
      'monitoramento.ler',
      'colaboradores.criar',
      'public (no token)',
      'perfil_acesso',
      'Problema',
    ]) {
      expect(html).toContain(text);
    }
    expect(html).not.toContain('/interno/fila');
    expect(html).not.toMatch(/<script|<link|src=/);
  });

  it('When a service is down, then the document still lists the others and says what is missing, and is not cached', async () => {
    const other = await startGatewayWithFakes({}, { access: accessSpecs, hubApi: hubSpecs });
    await other.upstreams.function.close();
    const response = await request(other.url).get('/openapi.json').expect(200);
    expect(response.body.info.description).toContain('function');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(Object.keys(response.body.paths)).toContain('/auth/acesso');
    expect(Object.keys(response.body.paths)).not.toContain('/funcao');
    await other.close();
  });

  it('When no service answers, then /openapi.json is 502 servico_indisponivel', async () => {
    const other = await startGatewayWithFakes();
    await Promise.all(Object.values(other.upstreams).map((u) => u.close()));
    const response = await request(other.url).get('/openapi.json').expect(502);
    expect(response.body.codigo).toBe('servico_indisponivel');
    await other.close();
  });

  it('When a service documents a header parameter (Idempotency-Key of POST /eventos), then the merged document keeps it', async () => {
    const publicar: RouteSpec = {
      method: 'post',
      path: '/eventos',
      summary: 'Publish',
      tag: 'Eventos',
      headers: z.object({ 'Idempotency-Key': z.string().optional().describe('repeat-safe key') }),
      body: z.object({ entidade_id: z.string() }),
      status: 201,
    };
    const other = await startGatewayWithFakes({}, { access: accessSpecs, hubApi: [...hubSpecs, publicar] });
    const response = await request(other.url).get('/openapi.json').expect(200);
    expect(response.body.paths['/eventos'].post.parameters).toEqual([
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'repeat-safe key',
        schema: expect.any(Object),
      },
    ]);
    await other.close();
  });
});
