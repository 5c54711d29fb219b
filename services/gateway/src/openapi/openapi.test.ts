import { readFileSync } from 'node:fs';
import type { RouteSpec } from '@hub/http';
import { lintOpenApi } from '@hub/testing';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { z } from 'zod';
import { type GatewayUnderTest, startGatewayWithFakes } from '../testing/gateway.test-support';
import { DOCS_ASSETS } from './docs.page';

/** The OpenAPI 3.1 schema (as published by the OpenAPI Initiative, shipped by @seriousme/openapi-schema-validator). */
function openApi31Validator() {
  const schema = JSON.parse(
    readFileSync(require.resolve('@seriousme/openapi-schema-validator/schemas/v3.1/schema.json'), 'utf8'),
  );
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('media-range', true);
  return { ajv, validate: ajv.compile(schema) };
}

/** Every `$ref` of the document, as JSON pointers into it. */
function refsOf(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsOf(item, found);
  else if (value && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') found.push(item);
      else refsOf(item, found);
    }
  return found;
}

const resolvePointer = (document: unknown, ref: string) =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>(
      (at, part) => (at as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')],
      document,
    );

const accessSpecs: RouteSpec[] = [
  {
    method: 'get',
    path: '/auth/acesso',
    summary: 'The caller’s own access',
    tag: 'Auth',
    response: z.object({ id: z.string(), email: z.string(), perfil_acesso: z.string().nullable().optional() }),
  },
  {
    method: 'post',
    path: '/auth',
    summary: 'Create an access',
    tag: 'Auth',
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
    tag: 'Função',
    permission: 'master',
    query: z.object({ pagina: z.coerce.number().optional() }),
  },
];
// A recursive schema, as hub-api's `dados` is: zod writes it with `$defs` inside the operation.
type Valor = string | number | Valor[] | { [chave: string]: Valor };
const valor: z.ZodType<Valor> = z.lazy(() =>
  z.union([z.string(), z.number(), z.array(valor), z.record(z.string(), valor)]),
);
const hubSpecs: RouteSpec[] = [
  {
    method: 'post',
    path: '/eventos',
    summary: 'Publish',
    tag: 'Eventos',
    security: ['aplicativo'],
    body: z.object({ tipo: z.string(), dados: z.record(z.string(), valor) }),
    response: z.object({ id: z.string(), dados: z.record(z.string(), valor) }),
    status: 201,
  },
  {
    method: 'get',
    path: '/aplicativo/:id',
    summary: 'One application',
    tag: 'Aplicativo',
    permission: 'monitoramento.ler',
    params: z.object({ id: z.uuid() }),
  },
  {
    method: 'get',
    path: '/.well-known/jwks.json',
    summary: 'Signing keys',
    tag: 'Chave de assinatura',
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
      '/eventos',
      '/funcao',
    ]);
    expect(document.paths['/auth'].post.description).toBe('Requires: colaboradores.criar');
    expect(document.tags.map((t: { name: string }) => t.name)).toEqual([
      'Aplicativo',
      'Auth',
      'Chave de assinatura',
      'Eventos',
      'Função',
    ]);
    expect(document.tags.every((t: { description?: string }) => t.description)).toBe(true);
    expect(document.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(document.paths['/auth'].post.operationId).toBe('criarAuth');
    expect(document.paths['/aplicativo/{id}'].get.operationId).toBe('obterAplicativo');
    expect(document.servers).toEqual([
      { url: 'https://sandbox.hub.example', description: 'SANDBOX' },
      { url: 'http://127.0.0.1:8080', description: 'LOCALHOST' },
      { url: 'https://hub.example', description: 'PRODUCTION' },
    ]);
  });

  it('When a route takes an application token, then the merged document names the aplicativo scheme on it and declares that scheme', async () => {
    const document = (await request(gateway.url).get('/openapi.json').expect(200)).body;
    expect(document.paths['/eventos'].post.security).toEqual([{ aplicativo: [] }]);
    expect(document.paths['/aplicativo/{id}'].get.security).toBeUndefined();
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['aplicativo', 'bearer']);
    expect(document.components.securitySchemes.aplicativo).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('When /openapi.json is asked, then it is valid OpenAPI 3.1, every $ref resolves and every schema compiles', async () => {
    const document = (await request(gateway.url).get('/openapi.json').expect(200)).body;
    const { ajv, validate } = openApi31Validator();
    expect(validate(document) ? [] : validate.errors).toEqual([]);
    const refs = refsOf(document);
    expect(refs.filter((ref) => resolvePointer(document, ref) === undefined)).toEqual([]);
    // The recursive schema's definition is a component, shared by the request and the answer.
    const hoisted = refs.filter((ref) => ref.startsWith('#/components/schemas/schema'));
    expect(new Set(hoisted).size).toBe(1);
    expect(JSON.stringify(document.paths)).not.toContain('$defs');
    ajv.addSchema(document, 'https://hub.test/openapi.json');
    for (const name of Object.keys(document.components.schemas))
      expect(() => ajv.compile({ $ref: `https://hub.test/openapi.json#/components/schemas/${name}` })).not.toThrow();
  });

  it("When Redocly's recommended rules lint /openapi.json, then they find no error and no warning", async () => {
    const document = (await request(gateway.url).get('/openapi.json').expect(200)).body;
    expect(await lintOpenApi(document)).toEqual({ errors: 0, warnings: 0, problems: [] });
  }, 60_000);

  it('When a tag of the document has no description, then the lint reports it as a warning', async () => {
    const document = (await request(gateway.url).get('/openapi.json').expect(200)).body;
    document.tags[0] = { name: document.tags[0].name };
    document.servers[0].url = 'https://api.example.com';
    const lint = await lintOpenApi(document);
    expect(lint.warnings).toBe(2);
    expect(lint.problems).toEqual([
      expect.stringMatching(/^no-server-example.com at #\/servers\/0\/url/),
      expect.stringMatching(/^tag-description at #\/tags\/0/),
    ]);
  }, 60_000);

  it('When /openapi.json is asked, then the delivery a subscriber receives is documented as a webhook with its headers, body and how to verify it', async () => {
    const document = (await request(gateway.url).get('/openapi.json').expect(200)).body;
    const delivery = document.webhooks.entrega.post;
    expect(delivery.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      'header:webhook-id',
      'header:webhook-timestamp',
      'header:webhook-signature',
      'header:webhook-key-id',
    ]);
    const signature = delivery.parameters[2];
    expect(signature.description).toContain('{webhook-id}.{webhook-timestamp}.{body}');
    expect(new RegExp(signature.schema.pattern).test(signature.example)).toBe(true);
    expect(new RegExp(signature.schema.pattern).test(`${signature.example} ${signature.example}`)).toBe(true);
    expect(new RegExp(signature.schema.pattern).test(`v1,${signature.example.slice(4)}`)).toBe(false);
    expect(delivery.description).toContain('@hub/webhook-verifier');
    expect(delivery.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Entrega' });
    const entrega = document.components.schemas.Entrega;
    expect(entrega.required).toEqual([
      'id',
      'tipo',
      'versao_do_esquema',
      'entidade_id',
      'ocorrido_em',
      'recebido_em',
      'aplicativo_publicador_id',
      'assinatura_id',
      'dados',
    ]);
    expect(delivery.description).toContain('expectedSubscription');
    const { ajv } = openApi31Validator();
    const { example, ...schema } = entrega;
    expect(ajv.validate(schema, example)).toBe(true);
    expect(ajv.validate(schema, { ...example, teste: true })).toBe(true);
    expect(ajv.validate(schema, { ...example, teste: false })).toBe(false);
    expect(ajv.validate(schema, { ...example, versao_do_esquema: 0 })).toBe(false);
  });

  it('When /docs is asked, then Swagger UI is served with every asset from the gateway itself, reading /openapi.json with a Bearer token', async () => {
    const response = await request(gateway.url).get('/docs').expect(200);
    expect(response.headers['content-type']).toContain('text/html');
    const policy = response.headers['content-security-policy'];
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self';");
    // Try-it-out may call the documented servers, nothing else.
    expect(policy).toContain(
      "connect-src 'self' https://sandbox.hub.example http://127.0.0.1:8080 https://hub.example;",
    );
    const html = response.text;
    const urls = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(urls.sort()).toEqual(['/docs/init.js', ...DOCS_ASSETS.map((file) => `/docs/assets/${file}`)].sort());
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/); // no inline script
    for (const url of urls) {
      const asset = await request(gateway.url).get(url).expect(200);
      expect(Number(asset.headers['content-length'] ?? Buffer.byteLength(asset.text ?? ''))).toBeGreaterThan(0);
    }
    const css = await request(gateway.url).get('/docs/assets/swagger-ui.css').expect(200);
    expect(css.headers['content-type']).toContain('text/css');
    const bundle = await request(gateway.url).get('/docs/assets/swagger-ui-bundle.js').expect(200);
    expect(bundle.headers['content-type']).toContain('javascript');
    expect(bundle.text).toContain('SwaggerUIBundle');
    const init = await request(gateway.url).get('/docs/init.js').expect(200);
    expect(init.text).toContain("url: '/openapi.json'");
    expect(init.text).toContain('validatorUrl: null');
    expect(init.text).toContain('persistAuthorization: false');
    expect(init.text).not.toMatch(/https?:\/\//);
  });

  it('When a file of the renderer package the page does not use is asked, then it is not served', async () => {
    for (const path of ['/docs/assets/package.json', '/docs/assets/index.html', '/docs/assets/..%2fpackage.json'])
      expect((await request(gateway.url).get(path)).status).toBe(404);
  });

  it('When the document declares its security, then try-it-out offers a Bearer token', async () => {
    const document = (await request(gateway.url).get('/openapi.json').expect(200)).body;
    expect(document.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(document.security).toEqual([{ bearer: [] }]);
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
    const other = await startGatewayWithFakes(
      {},
      { access: accessSpecs, hubApi: [...hubSpecs.filter((spec) => spec.path !== '/eventos'), publicar] },
    );
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
