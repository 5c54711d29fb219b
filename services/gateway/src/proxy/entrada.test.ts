import { connect } from 'node:net';
import { startTestIdentity, type TestIdentity, waitFor } from '@hub/testing';
import request from 'supertest';
import { type GatewayUnderTest, startGatewayWithKnownCaller } from '../testing/gateway.test-support';
import { bruto, corpoDe } from '../testing/raw-request.test-support';

/**
 * The raw front (entrada.ts): which requests it answers itself, which connections it hands to
 * node:http and how, in order, with nothing lost; its timeouts; the server closing under it. The
 * behaviours every request has whichever way it goes are in proxy.test.ts and ataque.test.ts,
 * whose fast-path cases run through it.
 */

let identity: TestIdentity;
let token: string;
let gateway: GatewayUnderTest;
/** Requests node:http served since the test began (the raw front's never reach it). */
let peloNode: string[];
const contar = (req: { url?: string }) => peloNode.push(req.url ?? '');

beforeAll(async () => {
  identity = await startTestIdentity();
  token = await identity.appToken('entrada');
  gateway = await startGatewayWithKnownCaller(identity, token);
  gateway.server.on('request', contar);
});
afterAll(async () => {
  await gateway.close();
  await identity.close();
});
beforeEach(() => {
  peloNode = [];
});

const auth = () => `authorization: Bearer ${token}\r\n`;
const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: g\r\n${auth()}${extra}\r\n`;
const post = (path: string, corpo: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: g\r\n${auth()}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(corpo)}\r\n${extra}\r\n${corpo}`;

/** The answers in a connection's raw text, in order: status and body. */
function respostas(texto: string): { status: number; corpo: string }[] {
  const out: { status: number; corpo: string }[] = [];
  let resto = texto;
  while (resto.startsWith('HTTP/1.1 ')) {
    const fimDaCabeca = resto.indexOf('\r\n\r\n');
    const cabeca = resto.slice(0, fimDaCabeca);
    const tamanho = /\r\ncontent-length: (\d+)/i.exec(cabeca);
    let fim: number;
    if (tamanho) fim = fimDaCabeca + 4 + Number(tamanho[1]);
    else if (/\r\ntransfer-encoding: chunked/i.test(cabeca)) fim = resto.indexOf('\r\n0\r\n\r\n', fimDaCabeca) + 7;
    else fim = resto.length;
    out.push({ status: Number(resto.slice(9, 12)), corpo: corpoDe(resto.slice(0, fim)) });
    resto = resto.slice(fim);
  }
  return out;
}

describe('the raw front', () => {
  it('When a known caller publishes, then the answer comes without node:http, with the gateway headers and kept alive', async () => {
    const texto = await bruto(gateway.url, [post('/eventos', '{"a":1}')], 500);
    expect(texto).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(texto).toMatch(/\r\nx-request-id: [\w-]+\r\n/i);
    expect(texto).toMatch(/\r\nratelimit: "aplicativo";r=\d+;t=\d+\r\n/i);
    expect(texto).toMatch(/\r\nx-content-type-options: nosniff\r\n/i);
    expect(texto).toMatch(/\r\nconnection: keep-alive\r\n/i);
    expect(JSON.parse(corpoDe(texto)).bodyBytes).toBe(7);
    expect(peloNode).toEqual([]);
  });

  it('When requests are pipelined in one write, then each is answered, in order, by the raw front', async () => {
    const texto = await bruto(
      gateway.url,
      [get('/aplicativo?n=1') + post('/eventos?n=2', '{}') + get('/aplicativo?n=3')],
      800,
    );
    const lidas = respostas(texto);
    expect(lidas.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(lidas.map((r) => JSON.parse(r.corpo).url)).toEqual(['/aplicativo?n=1', '/eventos?n=2', '/aplicativo?n=3']);
    expect(peloNode).toEqual([]);
  });

  it('When a request arrives in pieces (its head split, its body later), then it is answered whole by the raw front', async () => {
    const inteiro = post('/eventos?pedacos=1', '{"pedacos":true}');
    const texto = await new Promise<string>((resolve) => {
      const { hostname, port } = new URL(gateway.url);
      const socket = connect(Number(port), hostname);
      let lido = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        lido += chunk;
        if (lido.includes('bodyBytes')) {
          socket.destroy();
          resolve(lido);
        }
      });
      socket.write(inteiro.slice(0, 10));
      setTimeout(() => socket.write(inteiro.slice(10, inteiro.length - 5)), 50);
      setTimeout(() => socket.write(inteiro.slice(inteiro.length - 5)), 100);
    });
    expect(JSON.parse(corpoDe(texto))).toMatchObject({ url: '/eventos?pedacos=1', bodyBytes: 16 });
    expect(peloNode).toEqual([]);
  });

  it('When pipelined requests arrive a few bytes at a time, then each is answered whole, in order, its body intact', async () => {
    const corpo = JSON.stringify({ texto: 'abcdefghij'.repeat(200) });
    const todos =
      get('/aplicativo?n=1') + post('/eventos/eco', corpo) + get('/aplicativo?n=3', 'connection: close\r\n');
    const texto = await new Promise<string>((resolve) => {
      const { hostname, port } = new URL(gateway.url);
      const socket = connect(Number(port), hostname);
      socket.setNoDelay(true);
      socket.on('error', () => undefined);
      let lido = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        lido += chunk;
      });
      socket.on('close', () => resolve(lido));
      let i = 0;
      const pedaco = () => {
        if (i >= todos.length) return;
        socket.write(todos.slice(i, i + 7));
        i += 7;
        setTimeout(pedaco, 1);
      };
      pedaco();
    });
    const lidas = respostas(texto);
    expect(lidas.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(JSON.parse(lidas[0]!.corpo).url).toBe('/aplicativo?n=1');
    // The body as the client sent it, byte for byte, from the service's echo.
    expect(lidas[1]!.corpo).toBe(corpo);
    expect(JSON.parse(lidas[2]!.corpo).url).toBe('/aplicativo?n=3');
    expect(peloNode).toEqual([]);
  });

  it('When a client pipelines many requests and reads the answers only a second later, then every one is answered, in order', async () => {
    const n = 600;
    const pedidos = Array.from({ length: n }, (_v, i) => get(`/aplicativo/grande?bytes=16000&ordem=${i}`)).join('');
    const texto = await new Promise<string>((resolve) => {
      const { hostname, port } = new URL(gateway.url);
      const socket = connect(Number(port), hostname);
      socket.on('error', () => undefined);
      socket.pause();
      socket.write(`${pedidos}${get('/aplicativo?ultimo=1', 'connection: close\r\n')}`);
      const partes: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => partes.push(chunk));
      socket.on('close', () => resolve(Buffer.concat(partes).toString('latin1')));
      // The answers back up meanwhile (9.6 MB): the raw front waits for them to be taken.
      setTimeout(() => socket.resume(), 1_000);
    });
    const lidas = respostas(texto);
    expect(lidas).toHaveLength(n + 1);
    expect(lidas.slice(0, n).every((r) => r.status === 200 && r.corpo.length === 16_000)).toBe(true);
    expect(JSON.parse(lidas[n]!.corpo).url).toBe('/aplicativo?ultimo=1');
    const vistos = gateway.upstreams.hubApi.seen.filter((s) => s.url.includes('ordem=')).map((s) => s.url);
    expect(vistos).toEqual(Array.from({ length: n }, (_v, i) => `/aplicativo/grande?bytes=16000&ordem=${i}`));
    expect(peloNode).toEqual([]);
  }, 15_000);

  it("When a connection's next request is not the plain case, then the connection goes to node:http with it and everything after it, in order", async () => {
    const texto = await bruto(
      gateway.url,
      [get('/aplicativo?n=1') + get('/saude/prontidao') + get('/aplicativo?n=3') + post('/eventos?n=4', '{}')],
      1_000,
    );
    const lidas = respostas(texto);
    expect(lidas.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(JSON.parse(lidas[0]!.corpo).url).toBe('/aplicativo?n=1');
    expect(JSON.parse(lidas[2]!.corpo).url).toBe('/aplicativo?n=3');
    expect(JSON.parse(lidas[3]!.corpo).url).toBe('/eventos?n=4');
    // The first went raw; from the gateway's own route on, node:http served them all.
    expect(peloNode).toEqual(['/saude/prontidao', '/aplicativo?n=3', '/eventos?n=4']);
  });

  it.each([
    ['no token', get('/aplicativo').replace(auth(), '')],
    ['a token that does not verify', get('/aplicativo').replace(token, `${token}x`)],
    [
      'a chunked body',
      `POST /eventos HTTP/1.1\r\nHost: g\r\n${auth()}transfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    ],
    ['Expect: 100-continue', post('/eventos', '{}', 'expect: 100-continue\r\n')],
    ['HTTP/1.0', get('/aplicativo').replace('HTTP/1.1', 'HTTP/1.0')],
    ['OPTIONS', get('/aplicativo').replace('GET', 'OPTIONS')],
    ['an absolute target', get('/aplicativo').replace('/aplicativo', 'http://g/aplicativo')],
    ['a Connection naming a header', get('/aplicativo', 'connection: x-um\r\n')],
    ['two Authorization headers', get('/aplicativo', `${auth()}`)],
    ['a body over 16 KiB', post('/eventos', `"${'x'.repeat(17 * 1024)}"`)],
  ])('When a request has %s, then node:http serves it, as before the raw front', async (_caso, pedido) => {
    await bruto(gateway.url, [pedido], 600);
    expect(peloNode).toHaveLength(1);
  });

  it.each([
    ['a Content-Length and a Transfer-Encoding', post('/eventos', '{}', 'transfer-encoding: chunked\r\n')],
    ['two different Content-Lengths', post('/eventos', '{}', 'content-length: 5\r\n')],
    ['a folded header line', get('/aplicativo', 'x-um: a\r\n b\r\n')],
    ['a header name with a space', get('/aplicativo', 'x um: a\r\n')],
    ['a NUL in a header value', get('/aplicativo', 'x-um: a\0b\r\n')],
    ['a bare LF ending a header line', get('/aplicativo', 'x-um: a\nx-dois: b\r\n')],
    ['no Host', get('/aplicativo').replace('Host: g\r\n', '')],
  ])('When a request has %s, then node:http refuses it with 400 and no service sees it', async (_caso, pedido) => {
    const antes = gateway.upstreams.hubApi.seen.length;
    const texto = await bruto(gateway.url, [pedido], 600);
    expect(texto).toMatch(/^HTTP\/1\.1 400 /);
    expect(gateway.upstreams.hubApi.seen.length).toBe(antes);
  });

  it('When a client asks Connection: close, then its answer says so and the connection ends after it', async () => {
    const texto = await bruto(gateway.url, [get('/aplicativo', 'connection: close\r\n')], 3_000);
    expect(texto).toMatch(/\r\nconnection: close\r\n/i);
    expect(respostas(texto)).toHaveLength(1);
    expect(peloNode).toEqual([]);
  });

  it('When the answer is larger than the socket takes at once, then it arrives whole and the connection goes on', async () => {
    const texto = await bruto(
      gateway.url,
      [get('/aplicativo/grande?bytes=3000000') + get('/aplicativo?depois=1')],
      2_000,
    );
    const lidas = respostas(texto);
    expect(lidas.map((r) => r.status)).toEqual([200, 200]);
    expect(lidas[0]!.corpo).toHaveLength(3_000_000);
    expect(peloNode).toEqual([]);
  });

  it('When the rate limit refuses, then the raw front answers 429 as a problem, and the connection goes on', async () => {
    const limitado = await startGatewayWithKnownCaller(identity, token, { RATE_LIMIT_APPLICATION_PER_MINUTE: '2' });
    try {
      const texto = await bruto(limitado.url, [get('/aplicativo') + get('/aplicativo') + get('/aplicativo')], 800);
      const lidas = respostas(texto);
      // The caller's token was verified with one request already: one more fits its budget of 2.
      expect(lidas.map((r) => r.status)).toEqual([200, 429, 429]);
      expect(JSON.parse(lidas[1]!.corpo)).toMatchObject({ status: 429, codigo: 'muitas_requisicoes' });
      expect(texto).toMatch(/\r\ncontent-type: application\/problem\+json; charset=utf-8\r\n/);
      expect(texto).toMatch(/\r\nretry-after: \d+\r\n/i);
    } finally {
      await limitado.close();
    }
  });
});

describe('the raw front while the gateway stops', () => {
  it('When the server closes while a client does not read the answers it pipelined for, then close() resolves within seconds, not after GATEWAY_UPSTREAM_TIMEOUT', async () => {
    const parar = await startGatewayWithKnownCaller(identity, token);
    const { hostname, port } = new URL(parar.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    socket.pause();
    const marca = `nao-le=${Date.now()}`;
    const servidos = () => parar.upstreams.hubApi.seen.filter((s) => s.url.includes(marca)).length;
    try {
      socket.write(get(`/aplicativo/grande?bytes=16000&${marca}`).repeat(1_000));
      // The raw front stops reading once the answers back up (the socket's buffers full).
      let antes = -1;
      while (servidos() !== antes) {
        antes = servidos();
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      expect(servidos()).toBeLessThan(1_000);
      const inicio = Date.now();
      const fechou = await Promise.race([
        parar.parar().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000)),
      ]);
      expect(fechou).toBe(true);
      // What was written has ESPERA_DO_FIM_MS (5 s) to go out; GATEWAY_UPSTREAM_TIMEOUT is 30 s.
      expect(Date.now() - inicio).toBeLessThan(8_000);
    } finally {
      socket.destroy();
    }
  }, 20_000);

  it('When the server closes with an idle connection and one waiting for its answer, then the idle one ends at once, the busy one gets its answer with Connection: close, and close() resolves', async () => {
    const parar = await startGatewayWithKnownCaller(identity, token);
    const { hostname, port } = new URL(parar.url);
    const ocioso = connect(Number(port), hostname);
    const ociosoFechou = new Promise<void>((resolve) => ocioso.on('close', () => resolve()));
    ocioso.on('error', () => undefined);
    await request(parar.url).get('/aplicativo').set('authorization', `Bearer ${token}`).expect(200);
    const ocupado = connect(Number(port), hostname);
    let lido = '';
    ocupado.setEncoding('latin1');
    ocupado.on('data', (chunk: string) => {
      lido += chunk;
    });
    const ocupadoFechou = new Promise<void>((resolve) => ocupado.on('close', () => resolve()));
    // The fake service delays …/devagar?ms=N by N ms.
    ocupado.write(get('/aplicativo/devagar?ms=300'));
    await waitFor(() => parar.upstreams.hubApi.started.some((u) => u.startsWith('/aplicativo/devagar')), {
      what: 'the slow request at the service',
    });
    const fechou = parar.parar();
    await ociosoFechou;
    await ocupadoFechou;
    await fechou;
    expect(lido).toMatch(/^HTTP\/1\.1 200 /);
    expect(lido).toMatch(/\r\nconnection: close\r\n/i);
  });
});
