import { connect } from 'node:net';
import { createLogger } from '@hub/log';
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
  });
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
  /** Everything the server sent. */
  text: string;
}

/**
 * Sends `head`, then `filler` bytes in 64 KiB writes that wait for the socket to drain (as a client
 * streaming a huge header does), then the end of the head (and half-closes, unless `end` is false:
 * node:http aborts the requests in flight of a connection its client half-closed), and reads until
 * the server closes.
 */
function rawRequest(head: string, filler = 0, tail = '\r\n\r\n', end = true): Promise<RawAnswer> {
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
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, error, text });
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
      if (socket.destroyed) return;
      if (end) socket.end(tail);
      else socket.write(tail);
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

  it('When an oversized request is pipelined behind one still being answered, then that answer arrives whole, then the 431, then the end', async () => {
    const inside = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const answer = rawRequest(
      'GET /espera HTTP/1.1\r\nHost: x\r\n\r\nGET /oi HTTP/1.1\r\nHost: x\r\nX-Grande: ',
      20_000,
      '\r\n\r\n',
      false,
    );
    await inside;
    // The oversized head is refused while /espera is still being answered.
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    const { text, error } = await answer;
    // Node's default answer would have been a 431 read by the client as the answer to /espera; cutting
    // the connection instead lost /espera's own answer (a publication accepted, its 201 never read).
    expect(error).toBeUndefined();
    const respostas = text.split(/(?=HTTP\/1\.1 )/);
    expect(respostas.map((r) => r.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 431']);
    expect(respostas[0]!.endsWith('{"esperou":true}')).toBe(true);
    expect(JSON.parse(respostas[1]!.split('\r\n\r\n')[1]!)).toMatchObject({ codigo: 'cabecalhos_grandes_demais' });
  });

  it('When an oversized request comes behind two pipelined ones still being answered, then both answers arrive in order before the 431', async () => {
    const inside = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const answer = rawRequest(
      'GET /espera HTTP/1.1\r\nHost: x\r\n\r\nGET /oi HTTP/1.1\r\nHost: x\r\n\r\nGET /oi HTTP/1.1\r\nHost: x\r\nX-Grande: ',
      20_000,
      '\r\n\r\n',
      false,
    );
    await inside;
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    const { text, error } = await answer;
    expect(error).toBeUndefined();
    const respostas = text.split(/(?=HTTP\/1\.1 )/);
    expect(respostas.map((r) => r.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 431']);
    expect([respostas[0]!.endsWith('{"esperou":true}'), respostas[1]!.endsWith('{"oi":true}')]).toEqual([true, true]);
  });
});
