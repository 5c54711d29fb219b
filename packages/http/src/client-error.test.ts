import { connect } from 'node:net';
import { createLogger } from '@hub/log';
import { z } from 'zod';
import { createHttpApp, listen, type RunningServer } from './app';
import { ApiRouter } from './route';

/** Holds GET /espera until the test lets it go, so a request can be in flight on purpose. */
let release: () => void = () => {};
let arrived: () => void = () => {};
const router = new ApiRouter()
  .route({ method: 'get', path: '/oi', summary: 'hi', tag: 't' }, () => ({ oi: true }))
  .route({ method: 'get', path: '/espera', summary: 'wait', tag: 't' }, async () => {
    arrived();
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return { esperou: true };
  })
  .route(
    { method: 'post', path: '/eco', summary: 'echo', tag: 't', body: z.object({}).passthrough() },
    ({ body }) => body,
  );
const app = createHttpApp({ service: 'teste', logger: createLogger('teste'), routers: [router] });
let server: RunningServer;

beforeAll(async () => {
  server = await listen(app, 0);
});
afterAll(async () => {
  await server.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The socket error the client saw, if any (ECONNRESET when the server cut it while we sent). */
  error?: string;
}

/**
 * Sends `head`, then `filler` bytes in 64 KiB writes that wait for the socket to drain (as a client
 * streaming a huge header does), then the end of the head, and reads until the server closes.
 */
function rawRequest(head: string, filler = 0, tail = '\r\n\r\n'): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code;
    });
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [top = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = top.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, error });
    });
    socket.write(head);
    let left = filler;
    const pump = () => {
      while (left > 0 && !socket.destroyed) {
        const size = Math.min(left, 65_536);
        left -= size;
        if (!socket.write('a'.repeat(size))) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!socket.destroyed) socket.end(tail);
    };
    pump();
  });
}

function expectProblem(answer: RawAnswer, status: number, codigo: string) {
  expect(answer.error).toBeUndefined();
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/problem+json');
  expect(answer.headers.connection).toBe('close');
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  expect(JSON.parse(answer.body)).toMatchObject({ status, codigo, type: `urn:event-hub:problema:${codigo}` });
}

describe('Requests the HTTP parser refuses', () => {
  it('When a header is larger than the limit, then 431 problem+json cabecalhos_grandes_demais and Connection: close', async () => {
    const answer = await rawRequest('GET /oi HTTP/1.1\r\nHost: x\r\nX-Grande: ', 20_000);
    expectProblem(answer, 431, 'cabecalhos_grandes_demais');
  });

  it('When the request line is larger than the limit, then 431 problem+json too', async () => {
    const answer = await rawRequest('GET /', 100_000, ' HTTP/1.1\r\nHost: x\r\n\r\n');
    expectProblem(answer, 431, 'cabecalhos_grandes_demais');
  });

  it('When 4 MB of headers are streamed, then the whole 431 arrives and the connection is not reset', async () => {
    const answer = await rawRequest('GET /oi HTTP/1.1\r\nHost: x\r\nX-Grande: ', 4_000_000);
    expectProblem(answer, 431, 'cabecalhos_grandes_demais');
  });

  it('When the request is not HTTP, then 400 problem+json requisicao_invalida', async () => {
    expectProblem(await rawRequest('GET /a\u0000b HTTP/1.1\r\nHost: x\r\n\r\n'), 400, 'requisicao_invalida');
    expectProblem(await rawRequest('OI\r\n\r\n'), 400, 'requisicao_invalida');
  });

  it('When parser errors have been answered, then the server still serves requests', async () => {
    await rawRequest('GET /oi HTTP/1.1\r\nHost: x\r\nX-Grande: ', 100_000);
    const response = await fetch(`${server.url}/oi`);
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 200, body: { oi: true } });
  });

  it('When an oversized request is pipelined behind one still being answered, then that answer comes whole and the connection closes, without a stray answer', async () => {
    const inside = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // Not half-closed: node:http ends a connection whose client ended its side, answer or not.
    socket.write(
      `GET /espera HTTP/1.1\r\nHost: x\r\n\r\nGET /oi HTTP/1.1\r\nHost: x\r\nX-Grande: ${'a'.repeat(20_000)}`,
    );
    await inside;
    // The refused head is all sent (and refused) while /espera still waits.
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    await closed;
    // Node's default answer would have been a 431 read by the client as the answer to /espera;
    // cutting the connection, as before, lost /espera's own.
    const [head = '', body] = text.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/\r\nconnection: close(\r\n|$)/i);
    expect(JSON.parse(body ?? '')).toEqual({ esperou: true });
    expect(text.match(/HTTP\/1\.1/g)).toHaveLength(1);
  });

  /** Writes `bytes` on a new connection and reads until the server closes it. */
  async function exchange(bytes: string, whileOpen?: () => Promise<void>): Promise<string> {
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(bytes);
    await whileOpen?.();
    await closed;
    return text;
  }

  it('When node:http answers a request itself (no Host) and refused bytes follow in the same packet, then its answer goes out and the server lives on', async () => {
    const text = await exchange('GET /oi HTTP/1.1\r\n\r\nGET /a\u0000b HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect((await fetch(`${server.url}/oi`)).status).toBe(200);
  });

  it('When a body breaks off (a bad chunk) behind a request still being answered, then that answer comes whole, then 400 problem+json for the broken one', async () => {
    const inside = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const text = await exchange(
      'GET /espera HTTP/1.1\r\nHost: x\r\n\r\nPOST /eco HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      async () => {
        await inside;
        await new Promise((resolve) => setTimeout(resolve, 200));
        release();
      },
    );
    const answers = text.split(/(?=HTTP\/1\.1 )/);
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(answers[0]).toContain('{"esperou":true}');
    expect(answers[1]).toMatch(/^HTTP\/1\.1 400 /);
    expect(answers[1]).toContain('"codigo":"requisicao_invalida"');
  });

  it('When a lone request has a bad chunk, then 400 problem+json', async () => {
    const text = await exchange(
      'POST /eco HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    );
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toContain('"codigo":"requisicao_invalida"');
  });

  it('When the server closes with a connection that sent nothing and one halfway through a head, then close() ends at once', async () => {
    const other = await listen(app, 0);
    const idle = connect(other.port, '127.0.0.1');
    const half = connect(other.port, '127.0.0.1');
    await Promise.all([idle, half].map((s) => new Promise((resolve) => s.once('connect', resolve))));
    half.write('GET /oi HTTP/1.1\r\nHost: x\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await other.close();
    // Without the cut, close() waited for the headers timeout, which Node stops checking once closing.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(idle.readyState === 'closed' || idle.destroyed || (await closedSoon(idle))).toBe(true);
  });
});

describe('A closing server', () => {
  it('When an answer is held and another request is queued behind it, then close() sends both answers', async () => {
    const other = await listen(app, 0);
    const inside = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const socket = connect(other.port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.write(
      'GET /espera HTTP/1.1\r\nHost: x\r\n\r\nPOST /eco HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{"a":"b"}',
    );
    await inside;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = other.close();
    release();
    await closed;
    // Marking the first queued answer the connection's last dropped the one behind it (its handler had run).
    expect(text).toContain('{"esperou":true}');
    expect(text).toContain('{"a":"b"}');
  });

  it('When a request body never comes whole, then close() still ends (the connection is cut after the grace period)', async () => {
    const other = await listen(app, 0);
    const socket = connect(other.port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /eco HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":"1',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await other.close();
    expect(await closedSoon(socket)).toBe(true);
  }, 20_000);
});

function closedSoon(socket: import('node:net').Socket): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(true);
    socket.once('close', () => resolve(true));
    setTimeout(() => resolve(false), 1_000);
  });
}
