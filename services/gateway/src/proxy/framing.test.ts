import { connect } from 'node:net';
import { startTestIdentity, type TestIdentity, waitFor } from '@hub/testing';
import request from 'supertest';
import {
  type GatewayUnderTest,
  startGatewayWithKnownCaller,
  startGatewayWithRequestTimeout,
} from '../testing/gateway.test-support';
import { bruto } from '../testing/raw-request.test-support';

/**
 * The findings of the review that led the gateway to node:http and undici: a Connection header that
 * named Content-Length smuggled a request into another caller's, an idle connection held a minute,
 * requests to a busy service waited without bound.
 */
let identity: TestIdentity;
let atacante: string;
let vitima: string;
beforeAll(async () => {
  identity = await startTestIdentity();
  atacante = await identity.appToken('atacante');
  vitima = await identity.appToken('vitima');
});
afterAll(() => identity.close());

/** `n` publications at once, each answered 100 ms late by the recorder: as many slots held together. */
const publicacoesJuntas = (gateway: GatewayUnderTest, n: number) =>
  Promise.all(
    Array.from({ length: n }, (_v, i) =>
      request(gateway.url).post(`/eventos?atraso=100&pub=${i}`).set('authorization', `Bearer ${atacante}`).send({ i }),
    ),
  );

describe('the gateway writes the framing of what it forwards', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithKnownCaller(identity, atacante, { GATEWAY_MAX_IN_FLIGHT: '1' });
  });
  afterAll(() => gateway.close());

  it.each([
    'keep-alive, Content-Length',
    'Content-Length',
    'close, content-length, transfer-encoding, host',
    'keep-alive, Authorization',
  ])(
    "When Connection names the framing or the credentials (%s), then the body stays this request's and the next caller is answered for itself",
    async (connection) => {
      const hubApi = gateway.upstreams.hubApi;
      const antes = hubApi.seen.length;
      // One connection to the service (GATEWAY_MAX_IN_FLIGHT 1): the victim's request goes on the same one.
      const contrabando = 'DELETE /assinatura/alheia HTTP/1.1\r\nHost: x\r\nX: ';
      const ataque = await bruto(
        gateway.url,
        [
          `POST /eventos HTTP/1.1\r\nHost: g\r\nAuthorization: Bearer ${atacante}\r\nConnection: ${connection}\r\n` +
            `Content-Type: text/plain\r\nContent-Length: ${contrabando.length}\r\n\r\n${contrabando}`,
        ],
        1_000,
      );
      expect(ataque).toMatch(/^HTTP\/1\.1 200 /);
      const resposta = await request(gateway.url).get('/assinatura/minha').set('authorization', `Bearer ${vitima}`);
      expect(resposta.status).toBe(200);
      expect(resposta.body).toMatchObject({ servico: 'hub-api', method: 'GET', url: '/assinatura/minha' });
      const vistos = hubApi.seen.slice(antes);
      expect(vistos.map((v) => `${v.method} ${v.url}`)).toEqual(['POST /eventos', 'GET /assinatura/minha']);
      expect(vistos[0]!.bodyBytes).toBe(contrabando.length);
      expect(vistos[0]!.headers['content-length']).toBe(String(contrabando.length));
      expect(vistos[0]!.headers.authorization).toBe(`Bearer ${atacante}`);
      expect(vistos[1]!.headers.authorization).toBe(`Bearer ${vitima}`);
    },
  );

  it('When a request is refused for two Content-Lengths or a Transfer-Encoding beside one, then no service sees it', async () => {
    const antes = gateway.upstreams.hubApi.started.length;
    for (const framing of [
      'Content-Length: 3\r\nContent-Length: 4',
      'Content-Length: 3\r\nTransfer-Encoding: chunked',
    ]) {
      const resposta = await bruto(gateway.url, [
        `POST /eventos HTTP/1.1\r\nHost: g\r\nAuthorization: Bearer ${atacante}\r\n${framing}\r\n\r\nabcd`,
      ]);
      expect(resposta).toMatch(/^HTTP\/1\.1 400 /);
    }
    expect(gateway.upstreams.hubApi.started.length).toBe(antes);
  });
});

describe('the gateway under more requests than a service takes', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithKnownCaller(identity, atacante, { GATEWAY_MAX_IN_FLIGHT: '2' });
  });
  afterAll(() => gateway.close());

  it('When more requests than GATEWAY_MAX_IN_FLIGHT are under way to a service, then the next is 503 sobrecarregado at once, unsent', async () => {
    const bearer = `Bearer ${atacante}`;
    const lentas = [1, 2].map((i) =>
      request(gateway.url).get(`/evento/devagar?ms=1500&i=${i}`).set('authorization', bearer),
    );
    const pendentes = lentas.map((l) => l.then((r) => r.status));
    await waitFor(() => gateway.upstreams.hubApi.started.filter((p) => p.includes('devagar')).length === 2);
    const antes = gateway.upstreams.hubApi.started.length;
    const recusada = await request(gateway.url).post('/eventos').set('authorization', bearer).send({ a: 1 });
    expect(recusada.status).toBe(503);
    expect(recusada.body.codigo).toBe('sobrecarregado');
    expect(recusada.headers['retry-after']).toBe('1');
    expect(recusada.headers['content-type']).toContain('application/problem+json');
    expect(gateway.upstreams.hubApi.started.length).toBe(antes);
    // Refused ahead of the caller's identification and of its body (refuseEarly): a head whose body
    // never comes is answered 503 at once, not once its body would have been read.
    const { hostname, port } = new URL(gateway.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    const cabeca = new Promise<string>((resolve) => {
      let texto = '';
      socket.on('data', (chunk: Buffer) => {
        texto += chunk.toString('latin1');
        if (texto.includes('\r\n\r\n')) resolve(texto);
      });
    });
    socket.write('POST /eventos HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n');
    expect(await cabeca).toMatch(/^HTTP\/1\.1 503 /);
    socket.destroy();
    // Another service has slots of its own.
    await request(gateway.url).get('/funcao').set('authorization', bearer).expect(200);
    expect(await Promise.all(pendentes)).toEqual([200, 200]);
    // Once they are answered, the slots are free again.
    await request(gateway.url).post('/eventos').set('authorization', bearer).send({ a: 2 }).expect(200);
  });
});

describe('the gateway in front of a service answering slower than GATEWAY_TARGET_LATENCY', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithKnownCaller(identity, atacante, {
      GATEWAY_MAX_IN_FLIGHT: '50',
      GATEWAY_TARGET_LATENCY: '200ms',
    });
  });
  afterAll(() => gateway.close());

  it('When answers come slower than the target, then fewer requests are let through at once and the rest are 503 sobrecarregado at once', async () => {
    const bearer = `Bearer ${atacante}`;
    // Three answers three times slower than the target, one after the other: 50 → 40 → 32 → 25.
    for (let i = 0; i < 3; i += 1)
      await request(gateway.url).get(`/evento/devagar?ms=600&lento=${i}`).set('authorization', bearer).expect(200);
    // Each held 4 s, so that all thirty are under way together even when a loaded machine spreads
    // their arrival (with 600 ms, the first were answered before the last came, and so let them in).
    const respostas = await Promise.all(
      Array.from({ length: 30 }, (_v, i) =>
        request(gateway.url).get(`/evento/devagar?ms=4000&junto=${i}`).set('authorization', bearer),
      ),
    );
    const recusadas = respostas.filter((r) => r.status === 503);
    expect(recusadas.length).toBeGreaterThanOrEqual(5);
    for (const r of recusadas) {
      expect(r.body.codigo).toBe('sobrecarregado');
      expect(r.headers['retry-after']).toBe('1');
    }
    expect(respostas.every((r) => r.status === 200 || r.status === 503)).toBe(true);
    // Refused at once: the service never saw them.
    const vistos = gateway.upstreams.hubApi.started.filter((p) => p.includes('junto='));
    expect(vistos.length).toBe(30 - recusadas.length);
  });
});

describe('the gateway with publications under a limit of their own (GATEWAY_PUBLICATION_TARGET_LATENCY)', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithKnownCaller(identity, atacante, {
      GATEWAY_MAX_IN_FLIGHT: '60',
      GATEWAY_TARGET_LATENCY: '60s',
      GATEWAY_PUBLICATION_TARGET_LATENCY: '200ms',
    });
  });
  afterAll(() => gateway.close());

  it("When publications are answered slower than their target, then fewer of them go at once and the rest are 503 at once, while hub-api's other requests keep their own limit", async () => {
    const bearer = `Bearer ${atacante}`;
    // Four publications three times slower than their target, one after the other: 60 → 48 → 38 → 30 → 24.
    for (let i = 0; i < 4; i += 1)
      await request(gateway.url)
        .post(`/eventos?atraso=600&lento=${i}`)
        .set('authorization', bearer)
        .send({})
        .expect(200);
    // Answered in 2 s, so all of them are under way at once even on a loaded machine.
    const [publicacoes, leituras] = await Promise.all([
      Promise.all(
        Array.from({ length: 30 }, (_v, i) =>
          request(gateway.url).post(`/eventos?atraso=2000&junto=${i}`).set('authorization', bearer).send({}),
        ),
      ),
      Promise.all(
        Array.from({ length: 30 }, (_v, i) =>
          request(gateway.url).get(`/evento/devagar?ms=2000&leitura=${i}`).set('authorization', bearer),
        ),
      ),
    ]);
    const recusadas = publicacoes.filter((r) => r.status === 503);
    // 24 of the 30 go (with the 30 reads, 54 under way: within the service's 60).
    expect(recusadas.length).toBe(6);
    for (const r of recusadas) expect(r.body.codigo).toBe('sobrecarregado');
    expect(leituras.map((r) => r.status)).toEqual(Array(30).fill(200));
  });
});

describe('the gateway answering a slow body itself while the service answers after it', () => {
  let server: Awaited<ReturnType<typeof startGatewayWithRequestTimeout>>;
  beforeAll(async () => {
    server = await startGatewayWithRequestTimeout(identity.env, 1_000);
  });
  afterAll(() => server.close());

  it("When the gateway has answered 408 for a streamed body that stopped, then the service's later answer is dropped, the gateway goes on, and the next request is served", async () => {
    const { hostname, port } = new URL(server.url);
    const abertas = Array.from({ length: 20 }, (_v, i) => {
      const socket = connect(Number(port), hostname);
      socket.on('error', () => undefined);
      let recebido = '';
      socket.on('data', (chunk: Buffer) => {
        recebido += chunk.toString('latin1');
      });
      // Over INTEIRO_ATE, so streamed: the service has the head at once, the body never ends.
      socket.write(
        `POST /eventos/recusa-cedo?cedo=${2_000 + i * 50}&i=${i} HTTP/1.1\r\nhost: gw\r\ncontent-length: 20000\r\n\r\n{"a":`,
      );
      return { socket, resposta: () => recebido };
    });
    await waitFor(() => abertas.every((a) => /^HTTP\/1\.1 408 /.test(a.resposta())), { timeoutMs: 10_000 });
    // The services' 401s come after the 408s: they have nowhere to go.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    for (const a of abertas) a.socket.destroy();
    const seguinte = await fetch(`${server.url}/eventos/devagar?ms=1`);
    expect(seguinte.status).toBe(200);
  });
});

describe('the gateway and a connection that sends nothing', () => {
  let server: Awaited<ReturnType<typeof startGatewayWithRequestTimeout>>;
  beforeAll(async () => {
    server = await startGatewayWithRequestTimeout(identity.env, 1_000);
  });
  afterAll(() => server.close());

  it('When a fresh connection sends no byte, then node:http closes it within the header timeout', async () => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    let recebido = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      recebido += chunk;
    });
    const fechou = await new Promise<boolean>((resolve) => {
      const limite = setTimeout(() => resolve(false), 10_000);
      socket.once('close', () => {
        clearTimeout(limite);
        resolve(true);
      });
    });
    socket.destroy();
    expect(fechou).toBe(true);
    expect(recebido === '' || /^HTTP\/1\.1 408 /.test(recebido)).toBe(true);
  });
});

describe('the gateway under clients that send their bodies slowly', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithKnownCaller(identity, atacante, { GATEWAY_MAX_IN_FLIGHT: '2' });
  });
  afterAll(() => gateway.close());

  it('When requests without a token trickle their bodies, then they take none of the service slots and a caller with a token is still served', async () => {
    const { hostname, port } = new URL(gateway.url);
    // No token, a 1 KiB body of which one byte came: the gateway waits for the rest (node's requestTimeout, 30 s).
    const lentos = [1, 2].map(() => {
      const socket = connect(Number(port), hostname);
      socket.on('error', () => undefined);
      socket.write(
        `POST /eventos HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: 1024\r\n\r\n{`,
      );
      return socket;
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const servida = await request(gateway.url)
        .post('/eventos')
        .set('authorization', `Bearer ${atacante}`)
        .send({ a: 1 });
      expect(servida.status).toBe(200);
    } finally {
      for (const socket of lentos) socket.destroy();
    }
  });
});

describe('the gateway under clients that upload large bodies slowly', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithKnownCaller(identity, atacante, {
      GATEWAY_MAX_IN_FLIGHT: '10',
      GATEWAY_TARGET_LATENCY: '200ms',
    });
  });
  afterAll(() => gateway.close());

  it('When streamed bodies arrive slower than the target, then the time they took to come is not taken for the service answering slowly', async () => {
    const { hostname, port } = new URL(gateway.url);
    const metade = 'x'.repeat(10 * 1024);
    // One after the other, each over INTEIRO_ATE (streamed), its second half 400 ms after the first:
    // the service answers as soon as the body is there, yet each took 400 ms from its head.
    for (let i = 0; i < 6; i += 1) {
      const socket = connect(Number(port), hostname);
      socket.on('error', () => undefined);
      const resposta = new Promise<string>((resolve) => {
        let texto = '';
        socket.on('data', (chunk: Buffer) => {
          texto += chunk.toString('latin1');
          if (texto.includes('\r\n\r\n')) resolve(texto);
        });
      });
      socket.write(
        `POST /eventos?lento=${i} HTTP/1.1\r\nhost: gw\r\nauthorization: Bearer ${atacante}\r\ncontent-length: ${2 * metade.length}\r\n\r\n${metade}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 400));
      socket.write(metade);
      expect(await resposta).toMatch(/^HTTP\/1\.1 200 /);
      socket.destroy();
    }
    // Eight at once to a service that answers in 50 ms: within the bound of 10, none refused.
    const respostas = await Promise.all(
      Array.from({ length: 8 }, (_v, i) =>
        request(gateway.url).get(`/evento/devagar?ms=50&junto=${i}`).set('authorization', `Bearer ${atacante}`),
      ),
    );
    expect(respostas.map((r) => r.status)).toEqual(Array(8).fill(200));
  });
});

describe('the gateway under clients holding large chunked bodies unfinished', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    // One slot: 64 KiB of bodies read whole at once for hub-api (BUFFERED_PER_SLOT).
    gateway = await startGatewayWithKnownCaller(identity, atacante, { GATEWAY_MAX_IN_FLIGHT: '1' });
  });
  afterAll(() => gateway.close());

  it('When their bytes pass what the gateway holds for a service, then the next is 503 sobrecarregado and its connection closed; once they go, bodies are read again', async () => {
    const { hostname, port } = new URL(gateway.url);
    const pedaco = `${(40 * 1024).toString(16)}\r\n${'x'.repeat(40 * 1024)}\r\n`;
    const cabeca = 'POST /eventos HTTP/1.1\r\nhost: gw\r\ntransfer-encoding: chunked\r\n\r\n';
    const primeiro = connect(Number(port), hostname);
    primeiro.on('error', () => undefined);
    primeiro.write(cabeca + pedaco);
    await new Promise((resolve) => setTimeout(resolve, 200));
    try {
      const segundo = await bruto(gateway.url, [cabeca + pedaco]);
      expect(segundo).toMatch(/^HTTP\/1\.1 503 /);
      expect(segundo).toContain('"codigo":"sobrecarregado"');
      expect(segundo).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(segundo).toMatch(/\r\nconnection: close\r\n/i);
    } finally {
      primeiro.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const depois = await bruto(gateway.url, [`${cabeca + pedaco}0\r\n\r\n`], 1_000);
    expect(depois).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('the gateway under clients that start large bodies and go away', () => {
  let gateway: GatewayUnderTest;
  beforeEach(async () => {
    // Forty slots, ten of them for bodies still streaming in (a quarter).
    gateway = await startGatewayWithKnownCaller(identity, atacante, { GATEWAY_MAX_IN_FLIGHT: '40' });
  });
  afterEach(() => gateway.close());

  it.each([
    ['the service waiting for the rest', '/eventos'],
    ['the service answering later', '/eventos?atraso=300'],
    ['the service having answered before the body', '/evento/recusa-cedo'],
  ])(
    'When clients go away halfway through streamed bodies (%s), then the slots and the connections to the service they held are given back',
    async (_caso, caminho) => {
      const { hostname, port } = new URL(gateway.url);
      const hubApi = gateway.upstreams.hubApi;
      const sockets = Array.from({ length: 10 }, (_v, i) => {
        const socket = connect(Number(port), hostname);
        socket.on('error', () => undefined);
        socket.write(
          `POST ${caminho}${caminho.includes('?') ? '&' : '?'}meio=${i} HTTP/1.1\r\nhost: gw\r\nauthorization: Bearer ${atacante}\r\ncontent-length: 20000\r\n\r\n${'x'.repeat(5000)}`,
        );
        return socket;
      });
      await waitFor(() => hubApi.started.filter((p) => p.includes('meio=')).length === 10);
      for (const socket of sockets) socket.destroy();
      // The service's requests end too (but for the ones it had answered already).
      if (!caminho.includes('recusa-cedo'))
        await waitFor(() => hubApi.interrupted.filter((p) => p.includes('meio=')).length === 10);
      // Ten more streamed ones, in the share the first ten held, and forty at once, on every slot and
      // pool connection: every one answered.
      for (let i = 0; i < 10; i += 1)
        await request(gateway.url)
          .post(`/eventos?depois=${i}`)
          .set('authorization', `Bearer ${atacante}`)
          .set('content-type', 'text/plain')
          .send('x'.repeat(20000))
          .expect(200);
      const juntas = await Promise.all(
        Array.from({ length: 40 }, (_v, i) =>
          request(gateway.url).get(`/evento/devagar?ms=100&juntas=${i}`).set('authorization', `Bearer ${atacante}`),
        ),
      );
      expect(juntas.map((r) => r.status)).toEqual(Array(40).fill(200));
    },
  );
});

describe('the gateway under one client streaming large bodies slowly', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    // Eight slots for hub-api: a quarter of them, two, for bodies still streaming in.
    gateway = await startGatewayWithKnownCaller(identity, atacante, { GATEWAY_MAX_IN_FLIGHT: '8' });
  });
  afterAll(() => gateway.close());

  it('When its uploads hold the streaming share of a service, then its next is 503 sobrecarregado at once and publications keep the other slots', async () => {
    const { hostname, port } = new URL(gateway.url);
    const abrir = (i: number) => {
      const socket = connect(Number(port), hostname);
      socket.on('error', () => undefined);
      let texto = '';
      socket.on('data', (chunk: Buffer) => {
        texto += chunk.toString('latin1');
      });
      socket.write(
        `POST /eventos?devagar=${i} HTTP/1.1\r\nhost: gw\r\nauthorization: Bearer ${atacante}\r\ncontent-length: 20000\r\n\r\n${'x'.repeat(5000)}`,
      );
      return { socket, texto: () => texto };
    };
    const lentos = [abrir(0), abrir(1)];
    await waitFor(() => gateway.upstreams.hubApi.started.filter((p) => p.includes('devagar=')).length === 2);
    const terceiro = abrir(2);
    try {
      await waitFor(() => terceiro.texto().includes('\r\n\r\n'));
      expect(terceiro.texto()).toMatch(/^HTTP\/1\.1 503 /);
      expect(terceiro.texto()).toContain('"codigo":"sobrecarregado"');
      expect(terceiro.texto()).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(gateway.upstreams.hubApi.started.filter((p) => p.includes('devagar=2'))).toEqual([]);
      // Six publications at once, in the slots the uploads left: all sent.
      const publicacoes = await publicacoesJuntas(gateway, 6);
      expect(publicacoes.map((r) => r.status)).toEqual(Array(6).fill(200));
      // One upload ends: its share is free for the next.
      lentos[0]!.socket.write('x'.repeat(15000));
      await waitFor(() => lentos[0]!.texto().includes('\r\n\r\n'));
      expect(lentos[0]!.texto()).toMatch(/^HTTP\/1\.1 200 /);
      const quarto = abrir(3);
      quarto.socket.write('x'.repeat(15000));
      await waitFor(() => quarto.texto().includes('\r\n\r\n'));
      expect(quarto.texto()).toMatch(/^HTTP\/1\.1 200 /);
      quarto.socket.destroy();
    } finally {
      for (const { socket } of [...lentos, terceiro]) socket.destroy();
    }
  });
});

describe('the gateway under clients that send a head and a few bytes of a large body, then go away', () => {
  let gateway: GatewayUnderTest;
  beforeEach(async () => {
    // Ten slots for hub-api, two of them for bodies still streaming in: ten such clients at once fill them.
    gateway = await startGatewayWithKnownCaller(identity, atacante, { GATEWAY_MAX_IN_FLIGHT: '10' });
  });
  // The gateway's close ends: no upstream request or slot is left behind by the clients gone.
  afterEach(() => gateway.close());

  it.each([0, 50, 300])(
    'When ten go away %d ms after five bytes of 20,000, then the streaming share and the slots are given back',
    async (ms) => {
      const { hostname, port } = new URL(gateway.url);
      const sockets = Array.from({ length: 10 }, (_v, i) => {
        const socket = connect(Number(port), hostname);
        socket.on('error', () => undefined);
        socket.write(
          `POST /eventos?cinco=${i} HTTP/1.1\r\nhost: gw\r\nauthorization: Bearer ${atacante}\r\ncontent-length: 20000\r\n\r\nxxxxx`,
        );
        return socket;
      });
      await new Promise((resolve) => setTimeout(resolve, ms));
      for (const socket of sockets) socket.destroy();
      // Two streamed uploads at once (the whole share) and ten publications at once (every slot): all sent.
      const uploads = await Promise.all(
        [0, 1].map((i) =>
          request(gateway.url)
            .post(`/eventos?upload=${i}`)
            .set('authorization', `Bearer ${atacante}`)
            .set('content-type', 'text/plain')
            .send('x'.repeat(20000)),
        ),
      );
      expect(uploads.map((r) => r.status)).toEqual([200, 200]);
      const publicacoes = await publicacoesJuntas(gateway, 10);
      expect(publicacoes.map((r) => r.status)).toEqual(Array(10).fill(200));
    },
  );
});
