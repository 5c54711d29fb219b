import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A GET with the path sent exactly as written (clients such as supertest resolve `..` first) and,
 * optionally, from another loopback address, so that tests can play a second client IP for real.
 */
export function rawGet(
  baseUrl: string,
  path: string,
  options: { headers?: Record<string, string>; localAddress?: string } = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        path,
        method: 'GET',
        headers: options.headers,
        localAddress: options.localAddress,
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Writes `partes` on a connection of its own and resolves with all the gateway wrote back, once it closed or after `ms`. */
export function bruto(url: string, partes: (string | Buffer)[], ms = 3_000): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let texto = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      texto += chunk;
    });
    socket.on('error', () => undefined);
    const fim = setTimeout(() => {
      socket.destroy();
      resolve(texto);
    }, ms);
    socket.on('close', () => {
      clearTimeout(fim);
      resolve(texto);
    });
    for (const parte of partes) socket.write(parte);
  });
}

/** The body of the last answer in raw text (after its head's blank line), its chunks joined when it was chunked. */
export function corpoDe(texto: string): string {
  const depoisDe1xx = texto.lastIndexOf('\r\n\r\nHTTP/1.1 ');
  const inicio = depoisDe1xx === -1 ? 0 : depoisDe1xx + 4;
  const fimDaCabeca = texto.indexOf('\r\n\r\n', inicio);
  const corpo = texto.slice(fimDaCabeca + 4);
  if (!/\r\ntransfer-encoding: chunked\r\n/i.test(texto.slice(inicio, fimDaCabeca + 2))) return corpo;
  let juntos = '';
  for (let i = 0; ; ) {
    const linha = corpo.indexOf('\r\n', i);
    const tamanho = Number.parseInt(corpo.slice(i, linha), 16);
    if (!tamanho) return juntos;
    juntos += corpo.slice(linha + 2, linha + 2 + tamanho);
    i = linha + 4 + tamanho;
  }
}
