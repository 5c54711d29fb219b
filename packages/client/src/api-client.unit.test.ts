import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiClient, HubError, HubNetworkError } from './index';

/** A stand-in gateway over real HTTP: answers what `answer` says and keeps what it was sent. */
let server: Server;
let baseUrl: string;
let answer: { status: number; body?: unknown; type?: string } = { status: 200, body: {} };
const received: IncomingMessage[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push(req);
    res.statusCode = answer.status;
    if (answer.body === undefined) return res.end();
    res.setHeader('content-type', answer.type ?? 'application/json');
    res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  received.length = 0;
});

const problem = (status: number, codigo: string) => ({
  type: 'about:blank',
  title: 'x',
  status,
  detail: `detalhe ${codigo}`,
  codigo,
});

test('When a call succeeds, then it carries the token read at that moment and resolves with the data', async () => {
  let token: string | null = 'primeiro';
  const client = createApiClient({ baseUrl, token: () => token });
  answer = { status: 200, body: [{ nome: 'hub.entregas', papel: 'trabalho', mensagens: 0, consumidores: 1 }] };
  const { data } = await client.GET('/fila');
  expect(data?.[0]?.nome).toBe('hub.entregas');
  token = null;
  await client.GET('/fila');
  expect(received.map((r) => r.headers.authorization)).toEqual(['Bearer primeiro', undefined]);
});

test('When the API refuses, then the call rejects with HubError naming the problem, the method and the route', async () => {
  const client = createApiClient({ baseUrl, token: () => 't' });
  answer = { status: 403, body: problem(403, 'sem_permissao'), type: 'application/problem+json' };
  const error = await client
    .POST('/entrega/{id}/reenviar', { params: { path: { id: '0193a5b2-7c4e-7d1a-9f3b-2a1c5e8d9f01' } } })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(HubError);
  expect(error).toMatchObject({
    status: 403,
    codigo: 'sem_permissao',
    request: { method: 'POST', path: '/entrega/{id}/reenviar' },
  });
});

test('When the API answers 401, then onUnauthorized is told once and the call rejects; a 503 is not retried', async () => {
  const told: HubError[] = [];
  const client = createApiClient({ baseUrl, token: () => 't', onUnauthorized: (e) => told.push(e) });
  answer = { status: 401, body: problem(401, 'token_invalido'), type: 'application/problem+json' };
  await expect(client.GET('/fila')).rejects.toBeInstanceOf(HubError);
  expect(told.map((e) => e.codigo)).toEqual(['token_invalido']);

  answer = { status: 503, body: 'not json', type: 'text/plain' };
  await expect(client.GET('/fila')).rejects.toMatchObject({ status: 503, codigo: 'desconhecido' });
  expect(received).toHaveLength(2);
});

test('When the gateway cannot be reached, then the call rejects with HubNetworkError', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise((resolve) => closed.close(resolve));
  const client = createApiClient({ baseUrl: `http://127.0.0.1:${port}`, token: () => 't' });
  await expect(client.GET('/fila')).rejects.toBeInstanceOf(HubNetworkError);
});
