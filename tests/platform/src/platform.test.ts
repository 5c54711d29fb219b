// The gateway's route table is data; it is read from the gateway's public entry, nothing of it runs here.
import { ROUTE_TABLE } from '@hub/gateway';
import { lintOpenApi } from '@hub/testing';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { api, closeConnections, sendRaw } from './http-client';
import { type Platform, startPlatform } from './platform';
import { type OpenApiDocument, operationsOf } from './sweep/operations';

/** The services behind the gateway (identity-dev stands in for an external service and is not routed). */
const ROUTED = ['access', 'function', 'hub-api'] as const;

let platform: Platform;
let stopped = false;
let merged: OpenApiDocument;
const own = {} as Record<(typeof ROUTED)[number], OpenApiDocument>;

beforeAll(async () => {
  platform = await startPlatform();
  merged = (await api<OpenApiDocument>(platform.gatewayUrl, undefined, 'GET', '/openapi.json')).body;
  for (const name of ROUTED)
    own[name] = (await api<OpenApiDocument>(platform.urls[name], undefined, 'GET', '/openapi.json')).body;
}, 180_000);

afterAll(async () => {
  closeConnections();
  if (!stopped) await platform?.stop();
}, 60_000);

/** A concrete path for a documented one: ids are uuids, other parameters a value their pattern takes. */
const concrete = (path: string) =>
  path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
    name.endsWith('id') ? '0193a000-0000-7000-8000-000000000001' : name.includes('nome') ? 'rota.x' : '1',
  );

test("When a service documents an operation, then the gateway's merged document has it and the gateway routes it to that service", async () => {
  const problems: string[] = [];
  for (const name of ROUTED) {
    for (const operation of operationsOf(own[name])) {
      if (!merged.paths[operation.path]?.[operation.method.toLowerCase()])
        problems.push(`${name}: ${operation.key} is missing from the gateway's /openapi.json`);
      // Without a token the service itself answers 401 (or serves a public route); a 404
      // rota_inexistente means the request never reached a service that has the route.
      const response = await sendRaw(platform.gatewayUrl, { method: operation.method, path: concrete(operation.path) });
      const codigo = response.text.includes('"rota_inexistente"') ? 'rota_inexistente' : '';
      if (response.status === 404 && codigo)
        problems.push(`${name}: ${operation.key} answers 404 rota_inexistente through the gateway`);
      else if (operation.authenticated && response.status !== 401)
        problems.push(`${name}: ${operation.key} answers ${response.status} without a token through the gateway`);
    }
  }
  expect(problems).toEqual([]);
});

test("When Redocly's recommended rules lint the gateway's merged /openapi.json, then they find no error and no warning", async () => {
  expect(await lintOpenApi(merged)).toEqual({ errors: 0, warnings: 0, problems: [] });
}, 60_000);

test('When the gateway routes a path prefix to a service, then that service documents an operation under it', () => {
  const leadingNowhere = Object.entries(ROUTE_TABLE).flatMap(([name, prefixes]) => {
    const paths = Object.keys(own[name as (typeof ROUTED)[number]].paths);
    return prefixes
      .filter((prefix) => !paths.some((path) => path === prefix || path.startsWith(`${prefix}/`)))
      .map((prefix) => `${prefix} -> ${name}`);
  });
  expect(leadingNowhere).toEqual([]);
});

test('When the gateway merges the documents, then every operation it lists is one its service serves', () => {
  const served = new Set(ROUTED.flatMap((name) => operationsOf(own[name]).map((o) => o.key)));
  expect(
    operationsOf(merged)
      .filter((o) => !served.has(o.key))
      .map((o) => o.key),
  ).toEqual([]);
});

/** The hub's entities with their operation counts: the contract's 11 (docs/architecture.md §4), and that section's Perfil de acesso, Colaborador, Fila, Tentativa, Destino. */
const HUB_ENTITIES = {
  // the contract's 4, and POST and DELETE /aplicativo/{id}/portal (the subscribers' portal, issue 40)
  Aplicativo: 6,
  // the contract's 7, and POST /assinatura/testar-filtro (issue 20)
  Assinatura: 8,
  'Chave de assinatura': 1,
  Entrega: 4,
  Esquema: 1,
  Evento: 5,
  'Evento recusado': 3,
  Eventos: 2,
  'Solicitação de reprocessamento': 4,
  // POST /assinatura/{id}/reproduzir, GET /reproducao, GET /reproducao/{id}, POST /reproducao/{id}/cancelar (issue 40)
  Reprodução: 4,
  'Tipo de evento': 7,
  'Versão de esquema': 8,
  'Perfil de acesso': 7,
  Colaborador: 5,
  Fila: 4,
  Tentativa: 3,
  // GET list and item, PATCH, pausar, retomar, fechar-circuito (issue 24)
  Destino: 6,
};

test("When the merged document's operations are counted per entity, then the hub has the contract's 70 operations, testar-filtro, verificar-compatibilidade, the replays and the portal links in 17 entities", () => {
  const porTag: Record<string, number> = {};
  for (const ops of Object.values(merged.paths) as Record<string, { tags?: string[] }>[])
    for (const op of Object.values(ops)) for (const tag of op.tags ?? []) porTag[tag] = (porTag[tag] ?? 0) + 1;
  const doHub = Object.fromEntries(Object.keys(HUB_ENTITIES).map((tag) => [tag, porTag[tag] ?? 0]));
  expect(doHub).toEqual(HUB_ENTITIES);
  expect(Object.keys(doHub)).toHaveLength(17);
  expect(Object.values(doHub).reduce((a, b) => a + b, 0)).toBe(78);
});

test('When the platform has started, then a master token from identity-dev is accepted through the gateway', async () => {
  const token = await platform.userToken('admin.plataforma@empresa.com.br', { master: true });
  const acesso = await api(platform.gatewayUrl, token, 'GET', '/auth/acesso');
  expect(acesso).toMatchObject({ status: 200, body: { email: 'admin.plataforma@empresa.com.br', master: true } });
});

test('When the platform stops, then every service exits 0 on SIGTERM and its databases and virtual host are gone', async () => {
  const names = Object.values(platform.databases).map((url) => new URL(url).pathname.slice(1));
  stopped = true;
  const services = platform.services;
  expect(services).toEqual(expect.arrayContaining(['identity-dev', 'access', 'function', 'hub-api', 'gateway']));
  const codes = await platform.stop();
  // A service that did not exit 0 says why: its last lines come with the failure.
  for (const name of services)
    if (codes[name] !== 0)
      console.log(`${name} exited ${codes[name]} on SIGTERM; its last lines:\n${platform.output(name)}`);
  expect(codes).toEqual(Object.fromEntries(services.map((name) => [name, 0])));
  const admin = new pg.Client({
    connectionString: process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  });
  await admin.connect();
  try {
    const left = await admin.query('select datname from pg_database where datname = any($1)', [names]);
    expect(left.rows).toEqual([]);
  } finally {
    await admin.end();
  }
  const vhost = decodeURIComponent(new URL(platform.rabbitmqUrl).pathname.slice(1));
  const { stdout } = await promisify(execFile)('rabbitmqctl', ['-q', 'list_vhosts']);
  expect(stdout.split('\n').map((line) => line.trim())).not.toContain(vhost);
});
