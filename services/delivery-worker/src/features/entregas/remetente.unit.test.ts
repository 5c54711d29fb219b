import type dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import tls from 'node:tls';
import { parseAllowlist } from '@hub/destinations';
import { MAX_RESPOSTA, type OpcoesDoRemetente, Remetente } from './remetente';
import { ASSINATURA, CERTIFICADO_LOCALHOST, CHAVE_LOCALHOST, CORPO } from './remetente.test-support';

// The worker's HTTP client on its own, against servers in this process (docs/decisions/delivery-worker-http-client.md): what each POST carries, and each way it can end. The
// integration suites (entregas, concorrencia, destinos…) cover the same through the whole worker.

interface Pedido {
  url: string;
  cabecalhos: http.IncomingHttpHeaders;
  corpo: Buffer;
  /** The connection it came on. */
  socket: Socket;
}

type Rota = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A server that keeps every request and counts the connections it accepted; `rota` answers each. */
async function servidor(rota: Rota) {
  const pedidos: Pedido[] = [];
  let conexoes = 0;
  const server = http.createServer((req, res) => {
    const partes: Buffer[] = [];
    req.on('data', (p: Buffer) => partes.push(p));
    req.on('end', () => {
      pedidos.push({ url: req.url ?? '', cabecalhos: req.headers, corpo: Buffer.concat(partes), socket: req.socket });
      rota(req, res);
    });
  });
  server.on('connection', () => {
    conexoes += 1;
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (caminho: string) => `http://127.0.0.1:${port}${caminho}`,
    pedidos,
    conexoes: () => conexoes,
    fechar: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const remetentes: Remetente[] = [];
const fechamentos: (() => Promise<void>)[] = [];
function remetente(opcoes: Partial<OpcoesDoRemetente> = {}) {
  const r = new Remetente({ timeoutMs: 2_000, ambiente: 'LOCALHOST', allowlist: [], socketsPorOrigem: 4, ...opcoes });
  remetentes.push(r);
  return r;
}
async function comServidor(rota: Rota) {
  const s = await servidor(rota);
  fechamentos.push(s.fechar);
  return s;
}
afterEach(async () => {
  for (const r of remetentes.splice(0)) await r.close();
  for (const fechar of fechamentos.splice(0)) await fechar();
});

const ate = async (condicao: () => boolean, what: string) => {
  const limite = Date.now() + 5_000;
  while (!condicao()) {
    if (Date.now() > limite) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('Remetente (undici)', () => {
  it("When a POST goes, then it carries the body verbatim and the webhook headers, the trace's, and the URL's user as Basic auth", async () => {
    const s = await comServidor((_req, res) => res.writeHead(204).end());
    const rastro = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'a=1' };
    const url = `http://usu%C3%A1rio:s%3Aenha@127.0.0.1:${s.port}/gancho/x?token=abc#frag`;
    const resultado = await remetente().enviar(url, CORPO, ASSINATURA, rastro);
    expect(resultado).toMatchObject({ statusHttp: 204, sucesso: true, resposta: '', erro: null });
    const [pedido] = s.pedidos;
    expect(pedido!.url).toBe('/gancho/x?token=abc');
    expect(pedido!.corpo.equals(CORPO)).toBe(true);
    expect(pedido!.cabecalhos).toMatchObject({
      host: `127.0.0.1:${s.port}`,
      'content-type': 'application/json',
      'content-length': String(CORPO.length),
      'user-agent': 'event-hub-delivery-worker',
      connection: 'keep-alive',
      ...ASSINATURA,
      ...rastro,
      authorization: `Basic ${Buffer.from('usuário:s:enha').toString('base64')}`,
    });
  });

  it('When more POSTs go to one origin than socketsPorOrigem, then at most that many connections are open, kept alive for the next ones', async () => {
    const presos: http.ServerResponse[] = [];
    const s = await comServidor((_req, res) => void presos.push(res));
    const r = remetente({ socketsPorOrigem: 2 });
    const envios = Array.from({ length: 6 }, (_, i) => r.enviar(s.url(`/p${i}`), CORPO, ASSINATURA));
    await ate(() => presos.length === 2, 'two requests held');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(s.conexoes()).toBe(2);
    expect(presos).toHaveLength(2);
    // Answered one by one, the rest follow on the same two connections.
    while (s.pedidos.length < 6 || presos.length > 0) {
      await ate(() => presos.length > 0, 'a request held');
      presos.shift()!.writeHead(200).end('ok');
    }
    const resultados = await Promise.all(envios);
    expect(resultados.every((x) => x.sucesso && x.resposta === 'ok')).toBe(true);
    expect(s.conexoes()).toBe(2);
  });

  it('When the answer is endless, then 64 KiB of it are kept, NUL removed, and the connection is dropped', async () => {
    const s = await comServidor((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const pedaco = Buffer.alloc(16 * 1024, 'a');
      pedaco[0] = 0;
      const escrever = () => {
        while (!res.destroyed && res.write(pedaco));
        if (!res.destroyed) res.once('drain', escrever);
      };
      escrever();
    });
    const resultado = await remetente().enviar(s.url('/sem-fim'), CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: 200, sucesso: true, erro: null });
    // One NUL per 16 KiB piece, removed from the first 64 KiB.
    expect(resultado.resposta).toHaveLength(MAX_RESPOSTA - 4);
    expect(resultado.resposta).not.toContain('\u0000');
    await ate(() => s.pedidos[0]!.socket.destroyed, 'the connection dropped');
  });

  it('When no answer comes within the timeout, then the attempt is a timeout with no status; when the status came, it decides', async () => {
    const s = await comServidor((req, res) => {
      if (req.url === '/cabecalho') res.writeHead(200).write('parte');
    });
    const r = remetente({ timeoutMs: 300 });
    const [mudo, meio] = await Promise.all([
      r.enviar(s.url('/mudo'), CORPO, ASSINATURA),
      r.enviar(s.url('/cabecalho'), CORPO, ASSINATURA),
    ]);
    expect(mudo).toMatchObject({
      statusHttp: null,
      sucesso: false,
      resposta: null,
      erro: 'timeout: no answer within 300 ms',
    });
    expect(mudo.duracaoMs).toBeGreaterThanOrEqual(290);
    expect(meio).toMatchObject({ statusHttp: 200, sucesso: true, resposta: 'parte', erro: null });
    await ate(() => s.pedidos.every((p) => p.socket.destroyed), 'both connections dropped');
    // undici replaces a connection dropped under a request by a new idle one; nothing is sent again.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(s.pedidos).toHaveLength(2);
  });

  it('When the answer is a redirect, then it is a failure naming its Location, not followed', async () => {
    const s = await comServidor((_req, res) => res.writeHead(302, { location: '/outro' }).end());
    const resultado = await remetente().enviar(s.url('/velho'), CORPO, ASSINATURA);
    expect(resultado).toMatchObject({
      statusHttp: 302,
      sucesso: false,
      erro: 'redirect (HTTP 302 to /outro) not followed',
    });
    expect(s.pedidos).toHaveLength(1);
  });

  it('When a 503 or 429 says Retry-After, then it is read; a 500 fails as HTTP 500 with its body', async () => {
    const s = await comServidor((req, res) => {
      if (req.url === '/503') res.writeHead(503, { 'Retry-After': '7' }).end('cheio');
      else if (req.url === '/429') res.writeHead(429, { 'retry-after': 'nunca' }).end();
      else res.writeHead(500, { 'Retry-After': '9' }).end('quebrado');
    });
    const r = remetente();
    expect(await r.enviar(s.url('/503'), CORPO, ASSINATURA)).toMatchObject({
      statusHttp: 503,
      erro: 'HTTP 503',
      resposta: 'cheio',
      retryAfterMs: 7_000,
    });
    const de429 = await r.enviar(s.url('/429'), CORPO, ASSINATURA);
    expect(de429).toMatchObject({ statusHttp: 429, erro: 'HTTP 429' });
    expect(de429).not.toHaveProperty('retryAfterMs');
    const de500 = await r.enviar(s.url('/500'), CORPO, ASSINATURA);
    expect(de500).toMatchObject({ statusHttp: 500, sucesso: false, erro: 'HTTP 500', resposta: 'quebrado' });
    expect(de500).not.toHaveProperty('retryAfterMs');
  });

  it('When the worker cuts the POSTs under way, then each ends as aborted at once, and its connection goes', async () => {
    const s = await comServidor(() => undefined);
    const r = remetente({ socketsPorOrigem: 1 });
    const envios = [r.enviar(s.url('/a'), CORPO, ASSINATURA), r.enviar(s.url('/b'), CORPO, ASSINATURA)];
    await ate(() => s.pedidos.length === 1, 'the first request arrived');
    r.cortar();
    for (const resultado of await Promise.all(envios))
      expect(resultado).toMatchObject({ statusHttp: null, sucesso: false, erro: 'aborted: the worker is stopping' });
    await ate(() => s.pedidos[0]!.socket.destroyed, 'the connection dropped');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The second, still waiting for the connection, never went.
    expect(s.pedidos).toHaveLength(1);
  });

  it('When the connection is refused or closed before an answer, then the attempt says so plainly', async () => {
    const s = await comServidor((req) => req.socket.end());
    const porta = s.port;
    const r = remetente();
    expect(await r.enviar(s.url('/fecha'), CORPO, ASSINATURA)).toMatchObject({
      statusHttp: null,
      erro: `UND_ERR_SOCKET: the connection to 127.0.0.1:${porta} ended before an answer (other side closed)`,
    });
    await s.fechar();
    expect(await r.enviar(`http://127.0.0.1:${porta}/ok`, CORPO, ASSINATURA)).toMatchObject({
      statusHttp: null,
      sucesso: false,
      erro: `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${porta}`,
    });
  });

  it('When the URL is not one to send to, then the attempt says why and nothing is sent', async () => {
    const r = remetente();
    expect((await r.enviar('não é url', CORPO, ASSINATURA)).erro).toBe('url_de_destino is not a valid URL');
    expect((await r.enviar('ftp://exemplo.com/x', CORPO, ASSINATURA)).erro).toBe(
      'url_de_destino must use http or https, not ftp:',
    );
    expect((await r.enviar('http://a%zz:b@exemplo.com/x', CORPO, ASSINATURA)).erro).toBe(
      'url_de_destino has a user or password that is not valid percent-encoding',
    );
  });

  it('When the destination is https, then TLS is spoken with the host name as server name (and an untrusted certificate fails)', async () => {
    const nomes: string[] = [];
    const contexto = tls.createSecureContext({ key: CHAVE_LOCALHOST, cert: CERTIFICADO_LOCALHOST });
    const server = tls.createServer({
      // The server name as the client sent it (SNI), before the handshake fails on the certificate.
      SNICallback: (nome, pronto) => {
        nomes.push(nome);
        pronto(null, contexto);
      },
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fechamentos.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const resultado = await remetente().enviar(`https://localhost:${port}/gancho`, CORPO, ASSINATURA);
    expect(resultado).toMatchObject({
      statusHttp: null,
      sucesso: false,
      // Node 24 adds a hint about --use-system-ca to the message; Node 20 does not
      erro: expect.stringMatching(/^DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate/),
    });
    expect(nomes).toEqual(['localhost']);
  });
});

describe('Remetente outside LOCALHOST: the address really connected is checked', () => {
  const NOMES: Record<string, string> = { 'permitido.teste': '127.0.0.2', 'proibido.teste': '10.20.30.40' };
  const lookup = ((host: string, options: object, callback: (...args: unknown[]) => void) => {
    const address = NOMES[host] ?? '192.0.2.1';
    if ((options as { all?: boolean }).all) return callback(null, [{ address, family: 4 }]);
    return callback(null, address, 4);
  }) as unknown as typeof dns.lookup;
  const recusados: string[] = [];
  const seguro = () =>
    remetente({
      ambiente: 'SANDBOX',
      allowlist: [],
      lookup,
      aoRecusar: (host, endereco) => recusados.push(`${host} ${endereco}`),
    });

  it('When a host name resolves to a private address, then nothing is sent and the attempt says destino_proibido without the address', async () => {
    const resultado = await seguro().enviar('https://proibido.teste/gancho', CORPO, ASSINATURA);
    expect(resultado).toMatchObject({
      statusHttp: null,
      sucesso: false,
      erro: 'destino_proibido: proibido.teste resolves to a non-public address, where deliveries may not go',
    });
    expect(recusados).toContain('proibido.teste 10.20.30.40');
  });

  it('When the destination is a literal private address, then it is refused before any connection', async () => {
    const s = await comServidor((_req, res) => res.writeHead(204).end());
    const resultado = await seguro().enviar(s.url('/ok'), CORPO, ASSINATURA);
    expect(resultado.erro).toBe('destino_proibido: deliveries may not go to 127.0.0.1 (internal or reserved)');
    expect(s.conexoes()).toBe(0);
  });

  it('When an allowed host refuses the connection, then the error names the host, not the address it resolved to', async () => {
    const s = await comServidor(() => undefined);
    await s.fechar();
    const r = remetente({ ambiente: 'SANDBOX', allowlist: parseAllowlist('127.0.0.2'), lookup });
    const resultado = await r.enviar(`http://permitido.teste:${s.port}/ok`, CORPO, ASSINATURA);
    expect(resultado.erro).toBe(`ECONNREFUSED: connect ECONNREFUSED permitido.teste:${s.port}`);
  });
});
