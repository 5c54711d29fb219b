import { connect as connectHttp2 } from 'node:http2';
import { startTestIdentity, type TestIdentity, waitFor } from '@hub/testing';
import { HOST, REQUEST_TIMEOUT_MS, rodarCaso, rodarLento, type Sistema } from './differential';
import { sistemaDaBorda } from './edge-harness';
import {
  type GatewayNaFrente,
  gatewayEnv,
  type Recorders,
  startGatewayNaFrente,
  startRecorders,
} from './gateway-harness';
import { julgar } from './judge';
import { type Borda, startBorda } from './nginx';
import { abrir, enviar } from './raw-client';
import { type Gravador, startGravador, startGravadorLeniente } from './recorder';
import { CORPUS } from './smuggling-corpus';

/**
 * nginx at the edge (infra/edge/nginx.conf), over TLS, in front of the gateway and, for
 * publications, hub-api's recorder: the smuggling corpus with the same pass rule (nginx may refuse
 * more than node:http, never let a smuggled request through), HTTP/2, X-Forwarded-* and its limits.
 */

/** nginx's limit_conn per client address in this file (the corpus keeps at most two connections open at once). */
const LIMITE_DE_CONEXOES = 8;

let identity: TestIdentity;
let gravadores: Recorders;
let referencia: Gravador;
let leniente: Gravador;
let gateway: GatewayNaFrente;
let borda: Borda;
let tokens: Sistema['tokens'];
let sistema: Sistema;

beforeAll(async () => {
  identity = await startTestIdentity();
  gravadores = await startRecorders();
  referencia = await startGravador('referencia', REQUEST_TIMEOUT_MS);
  leniente = await startGravadorLeniente(REQUEST_TIMEOUT_MS);
  tokens = {
    atacante: await identity.userToken({ email: 'atacante@example.com' }),
    outro: await identity.userToken({ email: 'outro@example.com' }),
  };
  // Behind nginx on the same host, as docs/operations.md says: its X-Forwarded-* are kept.
  gateway = await startGatewayNaFrente(
    { ...gatewayEnv(identity, gravadores), GATEWAY_TRUST_PROXY: 'loopback' },
    gravadores,
    [tokens.atacante, tokens.outro],
  );
  borda = await startBorda({
    gateway: `127.0.0.1:${gateway.port}`,
    hubApi: `127.0.0.1:${gravadores['hub-api'].port}`,
    headerTimeout: '1s',
    bodyTimeout: '1s',
    keepaliveTimeout: '2s',
    connPerClient: LIMITE_DE_CONEXOES,
    // One worker: the tests share two cores with the rest of the machine.
    workers: '1',
  });
  sistema = sistemaDaBorda(borda, gravadores, tokens, leniente);
}, 30_000);

afterAll(async () => {
  await borda?.stop();
  await gateway?.close();
  await referencia?.close();
  await leniente?.close();
  await gravadores?.close();
  await identity?.close();
});

describe.each(CORPUS.filter((c) => c.lento === undefined).map((c) => [c.nome, c] as const))(
  'Through nginx and the gateway: %s',
  (_nome, caso) => {
    test('every request a service got is one node:http parsed, and the next caller is served as itself', async () => {
      const resultado = await rodarCaso(caso, referencia, sistema);
      const falhas = julgar(resultado);
      if (falhas.length > 0) falhas.push(await borda.errorLog());
      expect(falhas).toEqual([]);
    });
  },
);

describe.each(CORPUS.filter((c) => c.lento !== undefined).map((c) => [c.nome, c] as const))(
  'Through nginx: %s',
  (_nome, caso) => {
    test('nginx closes the connection by its timeouts, before the head is whole, and nothing reaches a service', async () => {
      for (const g of gravadores.todos) g.zerar();
      const { saida, total } = await rodarLento(caso, sistema);
      expect(saida.fechou).toBe(true);
      expect(saida.escritos).toBeLessThan(Math.max(total, 1));
      expect(gravadores.todos.flatMap((g) => g.registros)).toEqual([]);
    });
  },
);

/** One HTTP/2 request over TLS to nginx: its status and body. */
function http2(method: string, caminho: string, corpo?: string): Promise<{ status: number; corpo: string }> {
  const sessao = connectHttp2(`https://localhost:${borda.port}`, { ca: borda.ca });
  return new Promise((resolve, reject) => {
    sessao.on('error', reject);
    const req = sessao.request({
      ':method': method,
      ':path': caminho,
      authorization: `Bearer ${tokens.atacante}`,
      ...(corpo === undefined ? {} : { 'content-type': 'application/json' }),
    });
    let status = 0;
    let texto = '';
    req.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      texto += chunk;
    });
    req.on('end', () => {
      sessao.close();
      resolve({ status, corpo: texto });
    });
    req.on('error', reject);
    req.end(corpo);
  });
}

test('Over HTTP/2 a GET (through the gateway) and a POST with a body (straight to hub-api) each reach their service once', async () => {
  for (const g of gravadores.todos) g.zerar();
  const get = await http2('GET', '/perfil-de-acesso/h2');
  const post = await http2('POST', '/eventos', '{"h2":true}');
  expect([get.status, post.status]).toEqual([200, 200]);
  const chegaram = gravadores.todos.flatMap((g) => g.registros);
  expect(chegaram.map((r) => [r.servidor, r.method, r.url, r.corpo.toString()])).toEqual([
    ['access', 'GET', '/perfil-de-acesso/h2', ''],
    ['hub-api', 'POST', '/eventos', '{"h2":true}'],
  ]);
  expect(chegaram.every((r) => r.authorization === `Bearer ${tokens.atacante}`)).toBe(true);
});

test("A client's own X-Forwarded-For, -Proto and -Host are overwritten with what nginx saw, on both routes", async () => {
  for (const g of gravadores.todos) g.zerar();
  const forjados = 'X-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: forjado.example\r\n';
  for (const caminho of ['/eventos', '/perfil-de-acesso/encaminhado']) {
    const texto = `GET ${caminho} HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${tokens.atacante}\r\n${forjados}Connection: close\r\n\r\n`;
    const saida = await enviar(sistema.alvo, [texto], { prazoMs: 4_000 });
    expect(saida.status).toEqual([200]);
  }
  const chegaram = gravadores.todos.flatMap((g) => g.registros);
  expect(chegaram).toHaveLength(2);
  for (const r of chegaram) {
    const { 'x-forwarded-for': para, 'x-forwarded-proto': proto, 'x-forwarded-host': host } = r.cabecalhos;
    expect(String(para).split(',')[0]).toBe('127.0.0.1');
    expect(String(proto).split(',')[0]).toBe('https');
    expect(host).toBe(HOST);
    expect(JSON.stringify(r.cabecalhos)).not.toMatch(/6\.6\.6\.6|forjado\.example/);
  }
});

test('A header over 16 KiB is refused by nginx itself with 431 in problem+json, and reaches no service', async () => {
  for (const g of gravadores.todos) g.zerar();
  const texto = `GET /perfil-de-acesso HTTP/1.1\r\nHost: ${HOST}\r\nX-Grande: ${'g'.repeat(20_000)}\r\nConnection: close\r\n\r\n`;
  const saida = await enviar(sistema.alvo, [texto], { prazoMs: 4_000 });
  expect(saida.status).toEqual([431]);
  expect(saida.texto).toMatch(/content-type: application\/problem\+json/i);
  expect(saida.texto).toContain('"codigo": "cabecalhos_grandes_demais"');
  expect(gravadores.todos.flatMap((g) => g.registros)).toEqual([]);
});

test('A body over 1 MiB is refused by nginx with 413 before it reaches a service', async () => {
  for (const g of gravadores.todos) g.zerar();
  const corpo = 'x'.repeat(1024 * 1024 + 1);
  const texto = `POST /eventos HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${tokens.atacante}\r\nContent-Length: ${corpo.length}\r\n\r\n${corpo}`;
  const saida = await enviar(sistema.alvo, [texto], { prazoMs: 4_000, ate: '"codigo"' });
  expect(saida.status).toEqual([413]);
  expect(saida.texto).toContain('"codigo": "corpo_grande_demais"');
  expect(gravadores.todos.flatMap((g) => g.registros)).toEqual([]);
});

test('A kept-alive connection left idle after its answer is closed by nginx (keepalive_timeout)', async () => {
  const texto = `GET /perfil-de-acesso/ocioso HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${tokens.atacante}\r\n\r\n`;
  const saida = await enviar(sistema.alvo, [texto], { prazoMs: 10_000 });
  expect(saida.status).toEqual([200]);
  expect(saida.fechou).toBe(true);
});

test('Past limit_conn requests under way from one address, nginx answers 429 in problem+json, and serves again once they end', async () => {
  // Publications whose bodies come a byte at a time: each is under way (and counted) until it ends.
  const corpo = 'x'.repeat(100);
  const cabeca = `POST /eventos HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${tokens.atacante}\r\nContent-Length: ${corpo.length}\r\n\r\n`;
  const lentos = Array.from({ length: LIMITE_DE_CONEXOES }, () => abrir(sistema.alvo));
  // Only once its head went: a byte written before the handshake would go ahead of it.
  const prontos = new Set<(typeof lentos)[number]>();
  const gotejo = setInterval(() => {
    for (const s of prontos) if (!s.destroyed) s.write('x');
  }, 200);
  try {
    for (const s of lentos) {
      s.on('error', () => undefined);
      s.once('secureConnect', () => {
        s.write(cabeca);
        prontos.add(s);
      });
    }
    // Every slow publication's head is sent before the probes start (on a loaded machine the TLS
    // handshakes took most of the probes' window).
    await waitFor(() => prontos.size === lentos.length, { timeoutMs: 20_000, what: 'every slow head sent' });
    const pedido = `GET /perfil-de-acesso/limite HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`;
    const recusa = await waitFor(
      async () => {
        const saida = await enviar(sistema.alvo, [pedido], { prazoMs: 4_000 });
        return saida.status[0] === 429 ? saida : undefined;
      },
      { timeoutMs: 10_000, what: 'a 429 past limit_conn' },
    );
    expect(recusa.texto).toContain('"codigo": "conexoes_demais"');
  } finally {
    clearInterval(gotejo);
    for (const s of lentos) s.destroy();
  }
  const depois = await waitFor(
    async () => {
      const saida = await enviar(
        sistema.alvo,
        [`GET /perfil-de-acesso/depois HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`],
        { prazoMs: 4_000 },
      );
      return saida.status[0] === 200 ? saida : undefined;
    },
    { timeoutMs: 10_000, what: 'nginx to serve again' },
  );
  expect(depois.status).toEqual([200]);
});
