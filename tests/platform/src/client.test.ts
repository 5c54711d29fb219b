import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { uuidv7 } from '@hub/database';
import { criarCenario, gravarEvento, gravarTentativa } from '@hub/hub-api/src/features/eventos/linhas.test-support';
import { cenario } from '@hub/hub-api/src/features/publicacao/cenario.test-support';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from '@hub/hub-api/src/contexto.test-support';
import { createHubClient, HubError, HubNetworkError } from '@hub/client';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A fetch that counts the requests it sends (and sends them for real). */
function countingFetch() {
  const sent: Request[] = [];
  const counted: typeof fetch = (input, init) => {
    const request = new Request(input, init);
    sent.push(request.clone());
    return fetch(request);
  };
  return { fetch: counted, sent };
}

describe('against a real hub-api', () => {
  let ctx: Contexto;
  beforeAll(async () => {
    ctx = await iniciarContexto();
  });
  afterAll(() => encerrarContexto(ctx));

  test('When an application publishes, then the event is accepted with an Idempotency-Key made for it, and getEvento reads it back', async () => {
    const c = await cenario(ctx);
    const { fetch, sent } = countingFetch();
    let tokens = 0;
    const client = createHubClient({
      baseUrl: ctx.hub.url,
      fetch,
      token: async () => {
        tokens++;
        return c.tokenDoDono;
      },
    });
    const evento = await client.publish({
      tipo_de_evento_id: c.tipo.id,
      versao_do_esquema: 1,
      entidade_id: 'pedido-42',
      dados: { numero: 'A-42', valor: 42 },
    });
    expect(evento).toMatchObject({
      tipo_de_evento_id: c.tipo.id,
      entidade_id: 'pedido-42',
      aplicativo_publicador_id: c.dono.id,
      dados: { numero: 'A-42', valor: 42 },
    });
    expect(sent[0]!.headers.get('idempotency-key')).toMatch(UUID);
    const lido = await client.getEvento(evento.id);
    expect(lido.id).toBe(evento.id);
    expect(lido.dados).toEqual({ numero: 'A-42', valor: 42 });
    // The provider is asked for every request, so a refreshed token is used at once.
    expect(tokens).toBe(2);
  });

  test('When the same Idempotency-Key is given twice, then the hub answers the first event again', async () => {
    const c = await cenario(ctx);
    const client = createHubClient({ baseUrl: ctx.hub.url, token: () => c.tokenDoDono });
    const corpo = c.corpo() as Parameters<typeof client.publish>[0];
    const primeiro = await client.publish(corpo, { idempotencyKey: 'pedido-1-criado' });
    const segundo = await client.publish(corpo, { idempotencyKey: 'pedido-1-criado' });
    expect(segundo.id).toBe(primeiro.id);
    expect((await client.publish(corpo)).id).not.toBe(primeiro.id);
  });

  test('When dados breaks the schema, then HubError 422 with codigo and erros, sent once', async () => {
    const c = await cenario(ctx);
    const { fetch, sent } = countingFetch();
    const client = createHubClient({ baseUrl: ctx.hub.url, fetch, token: () => c.tokenDoDono });
    const error = await client
      .publish({ tipo_de_evento_id: c.tipo.id, versao_do_esquema: 1, entidade_id: 'p', dados: { numero: 7 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubError);
    expect(error).toMatchObject({ status: 422, codigo: 'dados_invalidos', attempts: 1 });
    expect((error as HubError).erros[0]).toEqual({
      caminho: expect.stringMatching(/^\/dados/),
      mensagem: expect.any(String),
    });
    expect(sent).toHaveLength(1);
  });

  test('When the token is not valid or the event does not exist, then HubError 401 / 404, never retried', async () => {
    const c = await cenario(ctx);
    const { fetch, sent } = countingFetch();
    const bad = createHubClient({ baseUrl: ctx.hub.url, fetch, token: () => 'not-a-token' });
    await expect(bad.publish(c.corpo() as never)).rejects.toMatchObject({ status: 401, attempts: 1 });
    const client = createHubClient({ baseUrl: ctx.hub.url, fetch, token: () => c.tokenDoDono });
    await expect(client.getEvento('01900000-0000-7000-8000-00000000ffff')).rejects.toMatchObject({
      status: 404,
      attempts: 1,
    });
    expect(sent).toHaveLength(2);
  });
});

describe('a subscribing application, against a real hub-api', () => {
  let ctx: Contexto;
  beforeAll(async () => {
    ctx = await iniciarContexto();
  });
  afterAll(() => encerrarContexto(ctx));

  /** A subscriber with two deliveries of its own, and another subscriber with one. */
  async function assinantes() {
    const [meu, outro] = await Promise.all([criarCenario(ctx), criarCenario(ctx)]);
    const evento = await gravarEvento(ctx.hub.db, meu, {
      recebidoEm: new Date('2021-01-01T00:00:00.000Z'),
      entregas: ['concluida', 'fila_de_erro'],
    });
    const alheio = await gravarEvento(ctx.hub.db, outro, { recebidoEm: new Date(), entregas: ['concluida'] });
    const aplicativo = await ctx.api().get(`/aplicativo/${meu.assinanteId}`).set(auth(ctx.todas));
    const token = await ctx.identity.appToken(aplicativo.body.client_id);
    return { meu, evento, alheio, client: createHubClient({ baseUrl: ctx.hub.url, token: () => token }) };
  }

  test('When a subscriber lists and reads its deliveries, then listEntregas and getEntrega answer its own only, filtered and paged', async () => {
    const { meu, evento, alheio, client } = await assinantes();
    const [concluida, naFila] = evento.entregas as [string, string];
    const pagina = await client.listEntregas();
    expect(pagina).toMatchObject({ pagina: 1, tamanho: 10, total: 2 });
    expect(pagina.itens.map((e) => e.id).sort()).toEqual([concluida, naFila].sort());
    const filtrada = await client.listEntregas({
      situacao: 'fila_de_erro',
      assinatura_id: meu.assinaturaId,
      tamanho: 1,
    });
    expect(filtrada.itens.map((e) => e.id)).toEqual([naFila]);
    expect(filtrada.total).toBe(1);
    await gravarTentativa(ctx.hub.db, naFila, 1, 500);
    const entrega = await client.getEntrega(naFila);
    expect(entrega).toMatchObject({ id: naFila, situacao: 'fila_de_erro', assinatura_id: meu.assinaturaId });
    expect(entrega.tentativas.map((t) => t.status_http)).toEqual([500]);
    await expect(client.getEntrega(alheio.entregas[0]!)).rejects.toMatchObject({
      status: 404,
      codigo: 'nao_encontrado',
      attempts: 1,
    });
    await expect(client.listEntregas({ situacao: 'perdida' as never })).rejects.toMatchObject({
      status: 400,
      codigo: 'consulta_invalida',
    });
  });

  test('When a subscriber resends its delivery, then reenviarEntrega starts a new cycle; another’s is HubError 404', async () => {
    const { evento, alheio, client } = await assinantes();
    const naFila = evento.entregas[1]!;
    const reenviada = await client.reenviarEntrega(naFila);
    expect(reenviada).toMatchObject({ id: naFila, situacao: 'pendente', tentativas_no_ciclo_atual: 0 });
    await expect(client.reenviarEntrega(naFila)).rejects.toMatchObject({ status: 409, codigo: 'entrega_em_andamento' });
    await expect(client.reenviarEntrega(alheio.entregas[0]!)).rejects.toMatchObject({ status: 404, attempts: 1 });
    await expect(client.reenviarEntrega(uuidv7())).rejects.toMatchObject({ status: 404 });
  });

  test('When a subscriber lists its subscriptions, then listAssinaturas answers its own, with its filters', async () => {
    const { meu, client } = await assinantes();
    const pagina = await client.listAssinaturas();
    expect(pagina).toMatchObject({ pagina: 1, total: 1 });
    expect(pagina.itens).toEqual([
      expect.objectContaining({ id: meu.assinaturaId, aplicativo_assinante_id: meu.assinanteId, ativa: true }),
    ]);
    expect((await client.listAssinaturas({ ativa: 'false' })).itens).toEqual([]);
    expect((await client.listAssinaturas({ tipo_de_evento_id: meu.tipoId })).total).toBe(1);
  });
});

interface Seen {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local HTTP server answering, in turn, what `answers` says (the last one repeats). */
async function scripted(answers: ('drop' | { status: number; headers?: Record<string, string>; body?: unknown })[]) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
      if (answer === 'drop') return req.socket.destroy();
      const json = answer.status >= 400 ? 'application/problem+json' : 'application/json';
      res.writeHead(answer.status, { 'content-type': json, ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const problem = (status: number, codigo: string, erros?: unknown[]) => ({
  type: 'about:blank',
  title: 'x',
  status,
  detail: `detail of ${codigo}`,
  codigo,
  ...(erros ? { erros } : {}),
});
const EVENTO = { id: '0193a5b2-7c4e-7d1a-9f3b-2a1c5e8d9f01', entidade_id: 'p-1' };
const CORPO = { tipo_de_evento_id: EVENTO.id, versao_do_esquema: 1, entidade_id: 'p-1', dados: {} };

describe('retries, against a local server', () => {
  test('When the hub answers 503 then 429 then 201, then publish retries with the same Idempotency-Key and honours Retry-After', async () => {
    const server = await scripted([
      { status: 503, headers: { 'retry-after': '2' }, body: problem(503, 'servico_indisponivel') },
      { status: 429, headers: { 'retry-after': '1' }, body: problem(429, 'limite_de_requisicoes') },
      { status: 201, body: EVENTO },
    ]);
    const waits: number[] = [];
    let n = 0;
    const client = createHubClient({
      baseUrl: server.url,
      token: () => `token-${++n}`,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await expect(client.publish(CORPO)).resolves.toEqual(EVENTO);
    expect(server.seen).toHaveLength(3);
    const keys = server.seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).toMatch(UUID);
    expect(new Set(keys).size).toBe(1);
    expect(server.seen.map((s) => JSON.parse(s.body))).toEqual([CORPO, CORPO, CORPO]);
    // The token provider is asked again on every attempt.
    expect(server.seen.map((s) => s.headers.authorization)).toEqual([
      'Bearer token-1',
      'Bearer token-2',
      'Bearer token-3',
    ]);
    expect(waits).toEqual([2000, 1000]);
    await server.close();
  });

  test('When two publishes are made, then each has a key of its own', async () => {
    const server = await scripted([{ status: 201, body: EVENTO }]);
    const client = createHubClient({ baseUrl: server.url, token: () => 't' });
    await client.publish(CORPO);
    await client.publish(CORPO);
    expect(server.seen[0]!.headers['idempotency-key']).not.toBe(server.seen[1]!.headers['idempotency-key']);
    await server.close();
  });

  test.each([400, 401, 403, 404, 409, 413, 422])(
    'When the hub answers %i, then publish throws its problem at once, without a retry',
    async (status) => {
      const erros = [{ caminho: '/dados/valor', mensagem: 'must be number' }];
      const server = await scripted([
        { status, body: problem(status, 'recusado', erros) },
        { status: 201, body: EVENTO },
      ]);
      const client = createHubClient({ baseUrl: server.url, token: () => 't', sleep: async () => undefined });
      const error = (await client.publish(CORPO).catch((e: unknown) => e)) as HubError;
      expect(error).toBeInstanceOf(HubError);
      expect(error).toMatchObject({ status, codigo: 'recusado', attempts: 1, erros });
      expect(error.problem.detail).toBe('detail of recusado');
      expect(server.seen).toHaveLength(1);
      await server.close();
    },
  );

  test('When the hub keeps answering 500, then publish gives up after maxAttempts with exponential backoff and jitter', async () => {
    const server = await scripted([{ status: 500, body: problem(500, 'erro_interno') }]);
    const waits: number[] = [];
    const client = createHubClient({
      baseUrl: server.url,
      token: () => 't',
      retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 250 },
      random: () => 0.5,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await expect(client.publish(CORPO)).rejects.toMatchObject({ status: 500, codigo: 'erro_interno', attempts: 4 });
    expect(server.seen).toHaveLength(4);
    expect(new Set(server.seen.map((s) => s.headers['idempotency-key'])).size).toBe(1);
    // Half (random 0.5) of 100, 200, then 250 (the ceiling instead of 400).
    expect(waits).toEqual([50, 100, 125]);
    await server.close();
  });

  test('When the connection drops, then publish retries with the same key and succeeds', async () => {
    const server = await scripted(['drop', { status: 201, body: EVENTO }]);
    const client = createHubClient({ baseUrl: server.url, token: () => 't', sleep: async () => undefined });
    await expect(client.publish(CORPO)).resolves.toEqual(EVENTO);
    expect(server.seen).toHaveLength(2);
    expect(server.seen[0]!.headers['idempotency-key']).toBe(server.seen[1]!.headers['idempotency-key']);
    await server.close();
  });

  test('When nothing listens, then publish throws HubNetworkError after maxAttempts', async () => {
    const server = await scripted([{ status: 201, body: EVENTO }]);
    await server.close();
    const client = createHubClient({
      baseUrl: server.url,
      token: () => 't',
      retry: { maxAttempts: 3 },
      sleep: async () => undefined,
    });
    const error = await client.publish(CORPO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubNetworkError);
    expect(error).toMatchObject({ attempts: 3 });
  });

  test('When a resend is answered 503 then 202, then reenviarEntrega retries after Retry-After; a 500 or a dropped connection is thrown at once', async () => {
    const entrega = { id: EVENTO.id, situacao: 'pendente', tentativas: [] };
    const ocupado = await scripted([
      { status: 503, headers: { 'retry-after': '1' }, body: problem(503, 'sobrecarregado') },
      { status: 202, body: entrega },
    ]);
    const waits: number[] = [];
    const client = createHubClient({
      baseUrl: ocupado.url,
      token: () => 't',
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await expect(client.reenviarEntrega(EVENTO.id)).resolves.toEqual(entrega);
    expect(ocupado.seen).toHaveLength(2);
    expect(waits).toEqual([1000]);
    await ocupado.close();

    const falha = await scripted([
      { status: 500, body: problem(500, 'erro_interno') },
      { status: 202, body: entrega },
    ]);
    const paraFalha = createHubClient({ baseUrl: falha.url, token: () => 't', sleep: async () => undefined });
    await expect(paraFalha.reenviarEntrega(EVENTO.id)).rejects.toMatchObject({ status: 500, attempts: 1 });
    expect(falha.seen).toHaveLength(1);
    await falha.close();

    const queda = await scripted(['drop', { status: 202, body: entrega }]);
    const paraQueda = createHubClient({ baseUrl: queda.url, token: () => 't', sleep: async () => undefined });
    const erro = await paraQueda.reenviarEntrega(EVENTO.id).catch((e: unknown) => e);
    expect(erro).toBeInstanceOf(HubNetworkError);
    expect(erro).toMatchObject({ attempts: 1 });
    expect(queda.seen).toHaveLength(1);
    await queda.close();
  });

  test('When a read of the subscriber is answered 500 then 200, then it is retried like getEvento', async () => {
    const pagina = { itens: [], pagina: 1, tamanho: 10, total: 0 };
    const server = await scripted([
      { status: 500, body: problem(500, 'erro_interno') },
      { status: 200, body: pagina },
    ]);
    const client = createHubClient({ baseUrl: server.url, token: () => 't', sleep: async () => undefined });
    await expect(client.listEntregas({ situacao: 'fila_de_erro', tamanho: 5 })).resolves.toEqual(pagina);
    expect(server.seen).toHaveLength(2);
    await server.close();
  });

  test('When Retry-After is longer than allowed, then the wait is cut to maxRetryAfterMs', async () => {
    const server = await scripted([
      { status: 429, headers: { 'retry-after': '3600' } },
      { status: 201, body: EVENTO },
    ]);
    const waits: number[] = [];
    const client = createHubClient({
      baseUrl: server.url,
      token: () => 't',
      retry: { maxRetryAfterMs: 5000 },
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await client.publish(CORPO);
    expect(waits).toEqual([5000]);
    await server.close();
  });
});
