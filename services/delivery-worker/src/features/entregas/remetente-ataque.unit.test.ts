import type dns from 'node:dns';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import tls from 'node:tls';
import { parseAllowlist } from '@hub/destinations';
import { proximoAtraso } from './atrasos';
import { lerRetryAfter, MAX_ERRO, MAX_RESPOSTA, type OpcoesDoRemetente, Remetente } from './remetente';
import { ASSINATURA, CERTIFICADO_LOCALHOST, CHAVE_LOCALHOST, CORPO } from './remetente.test-support';

// The worker's HTTP client attacked: by a subscriber who controls the server (and the DNS) behind
// its URL, and by a network that misbehaves. Outside LOCALHOST nothing may reach an internal or
// reserved address, whatever the URL or the DNS says; every answer, however hostile, ends within the
// timeout, 64 KiB and the header limit, as a result the attempt can store (no NUL, a status the
// column holds, an `erro` that names no address a host name resolved to).

/**
 * The subscriber's own address in these tests: 127.0.0.2, opened by the allow-list (as an operator
 * would open a partner's network), so a host name can reach a server here while everything else
 * internal stays refused. Linux answers on the whole of 127/8.
 */
const DO_ASSINANTE = '127.0.0.2';

const fechamentos: (() => Promise<void>)[] = [];
const remetentes: Remetente[] = [];
afterEach(async () => {
  for (const r of remetentes.splice(0)) await r.close();
  for (const fechar of fechamentos.splice(0)) await fechar();
});

/** A TCP server that writes what the test says: answers no HTTP library would write. */
async function bruto(aoConectar: (socket: Socket) => void, endereco = '127.0.0.1') {
  const sockets: Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    aoConectar(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, endereco, resolve));
  const { port } = server.address() as AddressInfo;
  const fechar = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  fechamentos.push(fechar);
  return { port, sockets, fechar, url: (caminho = '/') => `http://${endereco}:${port}${caminho}` };
}

/** A raw server that writes `resposta` once the request came (its first bytes), then reads on. */
const respondendo = (resposta: string | Buffer | ((socket: Socket) => void)) =>
  bruto((socket) => {
    socket.once('data', () => {
      if (typeof resposta === 'function') resposta(socket);
      else socket.write(resposta);
    });
    socket.resume();
  });

/** An http server counting its connections; each request is answered by `rota` once read. */
async function servidor(rota: (req: http.IncomingMessage, res: http.ServerResponse) => void, endereco = '127.0.0.1') {
  const sockets: Socket[] = [];
  const caminhos: string[] = [];
  const server = http.createServer((req, res) => {
    caminhos.push(req.url ?? '');
    req.resume();
    req.on('end', () => rota(req, res));
  });
  server.on('connection', (s: Socket) => void sockets.push(s));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, endereco, resolve));
  const { port } = server.address() as AddressInfo;
  const fechar = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  fechamentos.push(fechar);
  return { port, sockets, caminhos, url: (caminho = '/') => `http://${endereco}:${port}${caminho}` };
}

function remetente(opcoes: Partial<OpcoesDoRemetente> = {}) {
  const r = new Remetente({ timeoutMs: 2_000, ambiente: 'LOCALHOST', allowlist: [], socketsPorOrigem: 4, ...opcoes });
  remetentes.push(r);
  return r;
}

/**
 * A DNS the subscriber controls: each name answers what `nomes` says (a list: one answer per
 * lookup, the last repeating), and every lookup is counted.
 */
function dnsDoAssinante(nomes: Record<string, string[][]>) {
  const consultas: string[] = [];
  const vezes = new Map<string, number>();
  const lookup = ((host: string, options: object, callback: (...args: unknown[]) => void) => {
    consultas.push(host);
    const respostas = nomes[host];
    if (!respostas) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    const vez = vezes.get(host) ?? 0;
    vezes.set(host, vez + 1);
    const enderecos = respostas[Math.min(vez, respostas.length - 1)]!.map((address) => ({
      address,
      family: net.isIP(address),
    }));
    if ((options as { all?: boolean }).all) return callback(null, enderecos);
    return callback(null, enderecos[0]!.address, enderecos[0]!.family);
  }) as unknown as typeof dns.lookup;
  return { lookup, consultas };
}

/** A Remetente as in SANDBOX and PRODUCTION: the safe lookup, the subscriber's address allowed. */
function seguro(lookup?: typeof dns.lookup, opcoes: Partial<OpcoesDoRemetente> = {}) {
  const recusados: string[] = [];
  const r = remetente({
    ambiente: 'PRODUCTION',
    allowlist: parseAllowlist(DO_ASSINANTE),
    ...(lookup ? { lookup } : {}),
    aoRecusar: (host, endereco) => recusados.push(`${host} ${endereco}`),
    ...opcoes,
  });
  return { r, recusados };
}

const ate = async (condicao: () => boolean, what: string) => {
  const limite = Date.now() + 5_000;
  while (!condicao()) {
    if (Date.now() > limite) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
const espera = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SSRF: outside LOCALHOST no POST reaches an internal or reserved address', () => {
  // Every textual form the URL parser reads as a loopback, private, link-local or reserved address:
  // it normalises them all to the address, which is refused before any connection or lookup.
  const FORMAS: [string, string][] = [
    ['decimal', 'http://2130706433:PORTA/'],
    ['octal', 'http://0177.0.0.1:PORTA/'],
    ['hex', 'http://0x7f.0.0.1:PORTA/'],
    ['one hex number', 'http://0x7f000001:PORTA/'],
    ['short', 'http://127.1:PORTA/'],
    ['trailing dot', 'http://127.0.0.1.:PORTA/'],
    ['full-width digits', 'http://１２７.０.０.１:PORTA/'],
    ['IPv4-mapped IPv6', 'http://[::ffff:127.0.0.1]:PORTA/'],
    ['IPv4-mapped IPv6 in hex', 'http://[::ffff:7f00:1]:PORTA/'],
    ['IPv4-compatible IPv6', 'http://[::127.0.0.1]:PORTA/'],
    ['NAT64 of loopback', 'http://[64:ff9b::7f00:1]:PORTA/'],
    ['IPv6 loopback', 'http://[::1]:PORTA/'],
    ['IPv6 unspecified', 'http://[::]:PORTA/'],
    ['unspecified', 'http://0.0.0.0:PORTA/'],
    ['zero', 'http://0:PORTA/'],
    ['private', 'http://10.0.0.1:PORTA/'],
    ['CGNAT', 'http://100.64.0.1:PORTA/'],
    ['link-local metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['metadata, mapped', 'http://[::ffff:169.254.169.254]/latest/meta-data/'],
    ['AWS IMDS over IPv6', 'http://[fd00:ec2::254]/latest/meta-data/'],
    ['Azure wireserver', 'http://168.63.129.16/machine'],
    ['IPv6 link-local', 'http://[fe80::1]:PORTA/'],
    ['IPv6 unique local', 'http://[fc12::1]:PORTA/'],
    ['with user and password', 'http://user:pass@127.0.0.1:PORTA/'],
    ['a host-looking user', 'http://exemplo.com@127.0.0.1:PORTA/'],
  ];

  it.each(FORMAS)(
    'When the URL names an internal address as %s, then nothing is looked up or sent',
    async (_f, modelo) => {
      const s = await servidor((_req, res) => res.writeHead(204).end());
      const { lookup, consultas } = dnsDoAssinante({});
      // The metadata services stay refused even where an operator opened all of link-local.
      const { r } = seguro(lookup, { allowlist: parseAllowlist('169.254.0.0/16, fd00::/8') });
      const resultado = await r.enviar(modelo.replace('PORTA', String(s.port)), CORPO, ASSINATURA);
      expect(resultado).toMatchObject({ statusHttp: null, sucesso: false, resposta: null });
      expect(resultado.erro).toMatch(/^destino_proibido: deliveries may not go to \S+ \(internal or reserved\)$/);
      expect(consultas).toEqual([]);
      expect(s.sockets).toHaveLength(0);
    },
  );

  it.each(['localhost', 'localhost.', 'LOCALHOST', 'ip6-localhost'])(
    'When the host %s resolves (system DNS) to loopback, then nothing is sent and the address is not told',
    async (nome) => {
      const s = await servidor((_req, res) => res.writeHead(204).end());
      const { r, recusados } = seguro(undefined, { allowlist: [] });
      const resultado = await r.enviar(`http://${nome}:${s.port}/`, CORPO, ASSINATURA);
      expect(resultado).toMatchObject({ statusHttp: null, sucesso: false });
      // Refused, or unknown to this machine's resolver (ip6-localhost, localhost.): never sent.
      expect(resultado.erro).toMatch(/^(destino_proibido: \S+ resolves to a non-public address|ENOTFOUND|EAI_AGAIN)/);
      expect(resultado.erro).not.toMatch(/127\.0\.0\.1|::1/);
      if (resultado.erro!.startsWith('destino_proibido')) expect(recusados).toHaveLength(1);
      expect(s.sockets).toHaveLength(0);
    },
  );

  it('When a host name resolves to several addresses and any one is internal, then nothing is sent, whatever the order', async () => {
    const s = await servidor((_req, res) => res.writeHead(204).end(), DO_ASSINANTE);
    const { lookup } = dnsDoAssinante({
      'primeiro.teste': [[DO_ASSINANTE, '10.1.2.3']],
      'ultimo.teste': [['10.1.2.3', DO_ASSINANTE]],
      'v6.teste': [[DO_ASSINANTE, '::1']],
      'mapeado.teste': [[DO_ASSINANTE, '::ffff:169.254.169.254']],
    });
    const { r, recusados } = seguro(lookup);
    for (const nome of ['primeiro.teste', 'ultimo.teste', 'v6.teste', 'mapeado.teste']) {
      const resultado = await r.enviar(`http://${nome}:${s.port}/`, CORPO, ASSINATURA);
      expect(resultado.erro).toBe(
        `destino_proibido: ${nome} resolves to a non-public address, where deliveries may not go`,
      );
    }
    expect(recusados).toEqual([
      'primeiro.teste 10.1.2.3',
      'ultimo.teste 10.1.2.3',
      'v6.teste ::1',
      'mapeado.teste ::ffff:169.254.169.254',
    ]);
    expect(s.sockets).toHaveLength(0);
  });

  it('When the DNS rebinds after a first POST (public, then internal), then the next connection is refused: every new connection is checked', async () => {
    // Connection: close, so each POST needs a new connection.
    const s = await servidor((_req, res) => res.writeHead(204, { connection: 'close' }).end(), DO_ASSINANTE);
    const { lookup, consultas } = dnsDoAssinante({ 'rebind.teste': [[DO_ASSINANTE], ['10.0.0.5']] });
    const { r, recusados } = seguro(lookup);
    const url = `http://rebind.teste:${s.port}/gancho`;
    expect(await r.enviar(url, CORPO, ASSINATURA)).toMatchObject({ statusHttp: 204, sucesso: true });
    const segunda = await r.enviar(url, CORPO, ASSINATURA);
    expect(segunda).toMatchObject({
      statusHttp: null,
      sucesso: false,
      erro: 'destino_proibido: rebind.teste resolves to a non-public address, where deliveries may not go',
    });
    expect(consultas).toEqual(['rebind.teste', 'rebind.teste']);
    expect(recusados).toEqual(['rebind.teste 10.0.0.5']);
    expect(s.caminhos).toEqual(['/gancho']);
  });

  it('When a kept-alive connection is reused, then no new lookup is made: the address was checked when it was opened', async () => {
    const s = await servidor((_req, res) => res.writeHead(204).end(), DO_ASSINANTE);
    const { lookup, consultas } = dnsDoAssinante({ 'vivo.teste': [[DO_ASSINANTE], ['10.0.0.5']] });
    const { r } = seguro(lookup);
    const url = `http://vivo.teste:${s.port}/`;
    expect((await r.enviar(url, CORPO, ASSINATURA)).sucesso).toBe(true);
    // undici frees a connection for the next request one turn of the event loop after an answer
    // (a POST sent at once takes another connection, with its own lookup).
    await espera(20);
    expect(await r.enviar(url, CORPO, ASSINATURA)).toMatchObject({ erro: null });
    expect(consultas).toEqual(['vivo.teste']);
    expect(s.sockets).toHaveLength(1);
  });

  it('When the subscriber redirects to the metadata service, then the redirect is a failure and is not followed', async () => {
    const s = await servidor(
      (_req, res) => res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
      DO_ASSINANTE,
    );
    const { lookup, consultas } = dnsDoAssinante({ 'redir.teste': [[DO_ASSINANTE]] });
    const { r } = seguro(lookup);
    expect(await r.enviar(`http://redir.teste:${s.port}/`, CORPO, ASSINATURA)).toMatchObject({
      statusHttp: 307,
      sucesso: false,
      erro: 'redirect (HTTP 307 to http://169.254.169.254/latest/meta-data/) not followed',
    });
    expect(consultas).toEqual(['redir.teste']);
    expect(s.caminhos).toEqual(['/']);
  });

  it('When HTTP_PROXY and friends are set in the environment, then they are not used: the POST goes straight to the subscriber', async () => {
    const proxy = await servidor((_req, res) => res.writeHead(200).end('proxy'));
    const s = await servidor((_req, res) => res.writeHead(204).end(), DO_ASSINANTE);
    const { lookup } = dnsDoAssinante({ 'direto.teste': [[DO_ASSINANTE]] });
    const antes = { ...process.env };
    try {
      for (const nome of ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY'])
        process.env[nome] = proxy.url();
      const { r } = seguro(lookup);
      expect(await r.enviar(`http://direto.teste:${s.port}/x`, CORPO, ASSINATURA)).toMatchObject({
        statusHttp: 204,
        sucesso: true,
      });
    } finally {
      process.env = antes;
    }
    expect(proxy.sockets).toHaveLength(0);
    expect(s.caminhos).toEqual(['/x']);
  });

  it('When the host does not resolve or has no address, then the attempt says so and names no address', async () => {
    const { lookup } = dnsDoAssinante({ 'vazio.teste': [[]] });
    const { r } = seguro(lookup);
    expect((await r.enviar('http://nao-existe.teste/', CORPO, ASSINATURA)).erro).toBe(
      'ENOTFOUND: getaddrinfo ENOTFOUND nao-existe.teste',
    );
    const vazio = await r.enviar('http://vazio.teste/', CORPO, ASSINATURA);
    expect(vazio).toMatchObject({ statusHttp: null, sucesso: false });
    expect(vazio.erro).toBe('ENOTFOUND: vazio.teste has no address');
  });
});

describe('TLS: an https destination must prove who it is', () => {
  it('When an https host (by name, outside LOCALHOST) has an untrusted certificate, then the POST fails before anything is sent, its name given as SNI', async () => {
    const nomes: string[] = [];
    let pedidos = 0;
    const contexto = tls.createSecureContext({ key: CHAVE_LOCALHOST, cert: CERTIFICADO_LOCALHOST });
    const server = tls.createServer({
      SNICallback: (nome, pronto) => {
        nomes.push(nome);
        pronto(null, contexto);
      },
    });
    server.on('secureConnection', () => {
      pedidos += 1;
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, DO_ASSINANTE, resolve));
    fechamentos.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const { lookup } = dnsDoAssinante({ 'tls.teste': [[DO_ASSINANTE]] });
    const { r } = seguro(lookup);
    const resultado = await r.enviar(`https://tls.teste:${port}/`, CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: null, sucesso: false });
    expect(resultado.erro).toMatch(/^DEPTH_ZERO_SELF_SIGNED_CERT: /);
    expect(nomes).toEqual(['tls.teste']);
    expect(pedidos).toBe(0);
  });
});

describe('A hostile or broken answer ends within the bounds, as a result the attempt can store', () => {
  it('When the headers never end, then the POST fails at the header limit and its connection is dropped', async () => {
    const s = await respondendo((socket) => {
      socket.write('HTTP/1.1 200 OK\r\n');
      const linha = `x-lixo: ${'a'.repeat(1000)}\r\n`;
      const escrever = () => {
        while (!socket.destroyed && socket.write(linha));
        if (!socket.destroyed) socket.once('drain', escrever);
      };
      escrever();
    });
    const resultado = await remetente({ timeoutMs: 5_000 }).enviar(s.url(), CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: null, sucesso: false, resposta: null });
    expect(resultado.erro).toMatch(/^UND_ERR_HEADERS_OVERFLOW: /);
    await ate(() => s.sockets[0]!.destroyed, 'the connection dropped');
  });

  it('When thousands of small headers come (within the limit), then the answer is read and Retry-After found among them', async () => {
    const muitos = Array.from({ length: 1500 }, (_, i) => `x${i}: v\r\n`).join('');
    const s = await respondendo(`HTTP/1.1 429 Too Many\r\n${muitos}Retry-After: 30\r\nContent-Length: 2\r\n\r\nno`);
    expect(await remetente().enviar(s.url(), CORPO, ASSINATURA)).toMatchObject({
      statusHttp: 429,
      resposta: 'no',
      erro: 'HTTP 429',
      retryAfterMs: 30_000,
    });
  });

  it('When 1xx answers come for ever (103, 102…), then the timeout still ends the exchange and drops the connection', async () => {
    const s = await respondendo((socket) => {
      const um = () => {
        if (socket.destroyed) return;
        socket.write('HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n');
        setTimeout(um, 5);
      };
      um();
    });
    const resultado = await remetente({ timeoutMs: 300 }).enviar(s.url(), CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: null, sucesso: false, erro: 'timeout: no answer within 300 ms' });
    await ate(() => s.sockets[0]!.destroyed, 'the connection dropped');
  });

  it('When 1xx answers come before the final one, then they are passed over and the final one decides', async () => {
    const s = await respondendo(
      'HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    );
    expect(await remetente().enviar(s.url(), CORPO, ASSINATURA)).toMatchObject({
      statusHttp: 200,
      sucesso: true,
      resposta: 'ok',
      erro: null,
    });
  });

  it.each([
    [
      'an unrequested 100 Continue',
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n',
      'bad response',
    ],
    ['an unrequested upgrade', 'HTTP/1.1 101 Switching\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n', 'bad upgrade'],
  ])(
    'When the answer is %s, then undici drops it (node:http passed a 100 over) and the attempt says so, not that the subscriber closed',
    async (_caso, resposta, motivo) => {
      const s = await respondendo(resposta);
      expect(await remetente().enviar(s.url(), CORPO, ASSINATURA)).toMatchObject({
        statusHttp: null,
        sucesso: false,
        erro: `UND_ERR_SOCKET: the answer of 127.0.0.1:${s.port} was refused and the connection dropped (${motivo}: such as an unrequested 100 Continue or upgrade)`,
      });
      await ate(() => s.sockets[0]!.destroyed, 'the connection dropped');
    },
  );

  it('When the status line never ends, then the timeout ends the exchange', async () => {
    const s = await respondendo((socket) => {
      socket.write('HTTP/1.1 200 ');
      const um = () => {
        if (socket.destroyed) return;
        socket.write('a'.repeat(1024));
        setTimeout(um, 2);
      };
      um();
    });
    const resultado = await remetente({ timeoutMs: 300 }).enviar(s.url(), CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: null, sucesso: false });
    await ate(() => s.sockets[0]!.destroyed, 'the connection dropped');
  });

  it('When the body trickles a byte at a time after the status, then the timeout ends it and the status decides', async () => {
    const s = await respondendo((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n');
      const um = () => {
        if (socket.destroyed) return;
        socket.write('a');
        setTimeout(um, 50);
      };
      um();
    });
    const resultado = await remetente({ timeoutMs: 300 }).enviar(s.url(), CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: 200, sucesso: true, erro: null });
    expect(resultado.resposta).toMatch(/^a+$/);
    await ate(() => s.sockets[0]!.destroyed, 'the connection dropped');
  });

  it('When the subscriber answers before reading the body, then its answer decides', async () => {
    // A body larger than the socket buffers: the answer comes while it is still being written.
    const grande = Buffer.alloc(4 * 1024 * 1024, 'x');
    const s = await bruto((socket) => {
      socket.once('data', () => socket.write('HTTP/1.1 413 Payload Too Large\r\nContent-Length: 9\r\n\r\ntoo large'));
      socket.resume();
    });
    expect(await remetente().enviar(s.url(), grande, ASSINATURA)).toMatchObject({
      statusHttp: 413,
      sucesso: false,
      resposta: 'too large',
      erro: 'HTTP 413',
    });
  });

  it('When the connection is closed mid-body, then the status decides and what came is kept', async () => {
    const s = await respondendo((socket) => {
      socket.write('HTTP/1.1 503 Unavailable\r\nContent-Length: 100\r\nRetry-After: 5\r\n\r\nmetade');
      setTimeout(() => socket.destroy(), 20);
    });
    expect(await remetente().enviar(s.url(), CORPO, ASSINATURA)).toMatchObject({
      statusHttp: 503,
      sucesso: false,
      resposta: 'metade',
      erro: 'HTTP 503',
      retryAfterMs: 5_000,
    });
  });

  it('When the answer is HTTP/1.0 with its body until the connection closes, then it is read', async () => {
    const s = await respondendo((socket) => socket.end('HTTP/1.0 200 OK\r\n\r\nantigo'));
    expect(await remetente().enviar(s.url(), CORPO, ASSINATURA)).toMatchObject({
      statusHttp: 200,
      sucesso: true,
      resposta: 'antigo',
    });
  });

  it('When the answer has both Transfer-Encoding and Content-Length, then it is refused before its status (no smuggled answer is read)', async () => {
    const s = await respondendo(
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
    );
    const resultado = await remetente().enviar(s.url(), CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: null, sucesso: false, resposta: null });
    // undici's parser error, which it names after the Content-Length it was given.
    expect(resultado.erro).toBe(
      'UND_ERR_RES_CONTENT_LENGTH_MISMATCH: Response body length does not match content-length header',
    );
  });

  it.each([
    ['not a number', 'HTTP/1.1 abc Nope\r\n\r\n'],
    ['two digits', 'HTTP/1.1 20 Short\r\n\r\n'],
    ['four digits', 'HTTP/1.1 2000 Long\r\nContent-Length: 0\r\n\r\n'],
    ['not HTTP at all', 'SSH-2.0-OpenSSH_9.6\r\n'],
    ['an unknown version', 'HTTP/9.9 200 OK\r\nContent-Length: 0\r\n\r\n'],
  ])('When the status line is invalid (%s), then the POST fails with no status', async (_caso, resposta) => {
    const s = await respondendo(resposta);
    const resultado = await remetente().enviar(s.url(), CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: null, sucesso: false, resposta: null });
    expect(resultado.erro).toMatch(/^HTTPParserError: Response does not match the HTTP\/1\.1 protocol \(.+\)$/);
  });

  it.each([
    ['000', 'HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n'],
    ['099', 'HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n'],
  ])(
    'When the status is %s, then it is refused as no HTTP status and not kept (status_http holds 100 to 999)',
    async (status, resposta) => {
      const s = await respondendo(resposta);
      expect(await remetente().enviar(s.url(), CORPO, ASSINATURA)).toMatchObject({
        statusHttp: null,
        sucesso: false,
        resposta: null,
        erro: `invalid answer: ${status} is not an HTTP status`,
      });
      await ate(() => s.sockets[0]!.destroyed, 'the connection dropped');
    },
  );

  it('When the status is 999, then it is a failed attempt with that status', async () => {
    const s = await respondendo('HTTP/1.1 999 Weird\r\nContent-Length: 1\r\n\r\n?');
    expect(await remetente().enviar(s.url(), CORPO, ASSINATURA)).toMatchObject({
      statusHttp: 999,
      sucesso: false,
      resposta: '?',
      erro: 'HTTP 999',
    });
  });

  it('When the answer holds NUL bytes and invalid UTF-8, then the text kept has no NUL and is valid', async () => {
    const corpo = Buffer.concat([
      Buffer.from('a\u0000b'),
      Buffer.from([0xff, 0xfe, 0xc3, 0x00, 0xed, 0xa0, 0x80]),
      Buffer.from('z'),
    ]);
    const s = await respondendo(
      Buffer.concat([Buffer.from(`HTTP/1.1 500 Oops\r\nContent-Length: ${corpo.length}\r\n\r\n`), corpo]),
    );
    const resultado = await remetente().enviar(s.url(), CORPO, ASSINATURA);
    expect(resultado.statusHttp).toBe(500);
    expect(resultado.resposta).not.toContain('\u0000');
    expect(resultado.resposta!.startsWith('ab')).toBe(true);
    expect(resultado.resposta!.endsWith('z')).toBe(true);
    expect(Buffer.from(resultado.resposta!, 'utf8').toString('utf8')).toBe(resultado.resposta);
  });

  it('When a Location or another header holds NUL or a bare CR, then the answer is refused and no NUL reaches the error', async () => {
    for (const resposta of [
      'HTTP/1.1 302 Found\r\nLocation: /a\u0000b\r\nContent-Length: 0\r\n\r\n',
      'HTTP/1.1 302 Found\r\nLocation: /a\rb\r\nContent-Length: 0\r\n\r\n',
    ]) {
      const s = await respondendo(resposta);
      const resultado = await remetente().enviar(s.url(), CORPO, ASSINATURA);
      expect(resultado.sucesso).toBe(false);
      expect(resultado.erro).not.toContain('\u0000');
    }
  });

  it('When a redirect has an enormous Location, then the error is cut to the column', async () => {
    const s = await respondendo(`HTTP/1.1 301 Moved\r\nLocation: /${'l'.repeat(10_000)}\r\nContent-Length: 0\r\n\r\n`);
    const resultado = await remetente().enviar(s.url(), CORPO, ASSINATURA);
    expect(resultado.statusHttp).toBe(301);
    expect(resultado.erro).toHaveLength(MAX_ERRO);
    expect(resultado.erro!.startsWith('redirect (HTTP 301 to /lll')).toBe(true);
  });

  it('When the answer is endless and chunked, then 64 KiB are kept and the connection dropped', async () => {
    const s = await respondendo((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      const pedaco = `400\r\n${'b'.repeat(1024)}\r\n`;
      const escrever = () => {
        while (!socket.destroyed && socket.write(pedaco));
        if (!socket.destroyed) socket.once('drain', escrever);
      };
      escrever();
    });
    const resultado = await remetente().enviar(s.url(), CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: 200, sucesso: true });
    expect(resultado.resposta).toHaveLength(MAX_RESPOSTA);
    await ate(() => s.sockets[0]!.destroyed, 'the connection dropped');
  });
});

describe('Retry-After cannot stall a delivery', () => {
  const passos = [5_000, 30_000, 120_000];
  it.each(['99999999999999999999', '9'.repeat(400), 'Fri, 31 Dec 9999 23:59:59 GMT'])(
    'When a 429 says Retry-After %s, then the wait is at most the longest step',
    (valor) => {
      const ms = lerRetryAfter(valor, Date.parse('2026-03-01T12:00:00Z'));
      expect(ms).toBeGreaterThan(120_000);
      const { passoMs, expiracaoMs } = proximoAtraso(1, passos, ms, () => 0);
      expect(passoMs).toBe(120_000);
      expect(expiracaoMs).toBe(120_000);
      expect(String(expiracaoMs)).toBe('120000');
    },
  );

  it('When Retry-After is negative or a date already past, then it asks no wait', () => {
    expect(lerRetryAfter('-99999999999')).toBeUndefined();
    expect(lerRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT')).toBe(0);
  });
});

describe('The pools: bounded, and every POST ends whatever the phase', () => {
  it('When POSTs go to more origins than the pools kept, then the idle pools are closed (their connections too), busy ones are left, and an origin closed comes back', async () => {
    const a = await servidor((_req, res) => res.writeHead(204).end());
    const presos: http.ServerResponse[] = [];
    const b = await servidor((_req, res) => void presos.push(res));
    const c = await servidor((_req, res) => res.writeHead(204).end());
    const r = remetente({ poolsMaximos: 2 });
    expect((await r.enviar(a.url('/1'), CORPO, ASSINATURA)).sucesso).toBe(true);
    const deB = r.enviar(b.url('/1'), CORPO, ASSINATURA);
    await ate(() => presos.length === 1, "b's request held");
    // A third origin: a's pool, idle, is closed with its kept-alive connection; b's, busy, stays.
    expect((await r.enviar(c.url('/1'), CORPO, ASSINATURA)).sucesso).toBe(true);
    await ate(() => a.sockets[0]!.destroyed, "a's idle connection closed");
    presos.shift()!.writeHead(200).end('b');
    expect(await deB).toMatchObject({ sucesso: true, resposta: 'b' });
    expect((await r.enviar(a.url('/2'), CORPO, ASSINATURA)).sucesso).toBe(true);
    expect(a.caminhos).toEqual(['/1', '/2']);
    expect(a.sockets).toHaveLength(2);
  });

  it('When the lookup never answers, then the timeout ends the POST', async () => {
    const lookup = (() => undefined) as unknown as typeof dns.lookup;
    const { r } = seguro(lookup, { timeoutMs: 300 });
    expect(await r.enviar('http://lento.teste/', CORPO, ASSINATURA)).toMatchObject({
      statusHttp: null,
      sucesso: false,
      erro: 'timeout: no answer within 300 ms',
    });
  });

  it('When the worker cuts while the lookup, the connection, the answer and the body are under way, then every POST ends as aborted at once', async () => {
    const pendurado = (() => undefined) as unknown as typeof dns.lookup;
    const nomes = dnsDoAssinante({ 'p.teste': [[DO_ASSINANTE]] });
    const lookup = ((host: string, options: object, callback: (...args: unknown[]) => void) =>
      host === 'pendurado.teste'
        ? (pendurado as unknown as (...a: unknown[]) => void)(host, options, callback)
        : (nomes.lookup as unknown as (...a: unknown[]) => void)(
            host,
            options,
            callback,
          )) as unknown as typeof dns.lookup;
    const mudo = await bruto((socket) => void socket.resume(), DO_ASSINANTE);
    const meio = await bruto((socket) => {
      socket.once('data', () => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nmeio'));
      socket.resume();
    }, DO_ASSINANTE);
    const { r } = seguro(lookup, { timeoutMs: 10_000 });
    const envios = [
      r.enviar('http://pendurado.teste/', CORPO, ASSINATURA),
      r.enviar(`http://p.teste:${mudo.port}/`, CORPO, ASSINATURA),
      r.enviar(`http://p.teste:${meio.port}/`, CORPO, ASSINATURA),
    ];
    await ate(() => mudo.sockets.length === 1 && meio.sockets.length === 1, 'both connections');
    await espera(50);
    r.cortar();
    const [noLookup, semResposta, noCorpo] = await Promise.all(envios);
    for (const resultado of [noLookup, semResposta])
      expect(resultado).toMatchObject({ statusHttp: null, sucesso: false, erro: 'aborted: the worker is stopping' });
    // The status had come: cut during the body, the attempt is still an aborted one, not a success.
    expect(noCorpo).toMatchObject({ sucesso: false, erro: 'aborted: the worker is stopping' });
    await ate(() => mudo.sockets[0]!.destroyed && meio.sockets[0]!.destroyed, 'the connections dropped');
  });

  it('When the pools are closed with POSTs under way, then every POST ends (none hangs), none as a success', async () => {
    const presos: http.ServerResponse[] = [];
    const s = await servidor((_req, res) => void presos.push(res));
    const r = remetente({ socketsPorOrigem: 2 });
    const envios = Array.from({ length: 5 }, (_, i) => r.enviar(s.url(`/${i}`), CORPO, ASSINATURA));
    await ate(() => presos.length === 2, 'two requests held');
    await r.close();
    const resultados = await Promise.all(envios);
    expect(resultados.every((x) => !x.sucesso && x.statusHttp === null && x.erro !== null)).toBe(true);
  });
});

describe('The error text names no address a host name resolved to, and says what happened', () => {
  it('When every address of a host refuses the connection, then the error names the host, not its addresses, and says what failed', async () => {
    const fechado = await bruto(() => undefined, DO_ASSINANTE);
    await fechado.fechar();
    fechamentos.pop();
    const { lookup } = dnsDoAssinante({ 'varios.teste': [[DO_ASSINANTE, '127.0.0.3']] });
    const { r } = seguro(lookup, { allowlist: parseAllowlist('127.0.0.2/31') });
    const resultado = await r.enviar(`http://varios.teste:${fechado.port}/`, CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: null, sucesso: false });
    expect(resultado.erro).not.toMatch(/127\.0\.0\.[23]/);
    expect(resultado.erro).toBe(
      `ECONNREFUSED: connect ECONNREFUSED varios.teste:${fechado.port} (the first of its 2 addresses; each failed)`,
    );
  });

  it('When the subscriber resets the connection before answering, then the error names neither address nor port it resolved to', async () => {
    const s = await bruto((socket) => socket.once('data', () => socket.resetAndDestroy()), DO_ASSINANTE);
    const { lookup } = dnsDoAssinante({ 'rst.teste': [[DO_ASSINANTE]] });
    const { r } = seguro(lookup);
    const resultado = await r.enviar(`http://rst.teste:${s.port}/`, CORPO, ASSINATURA);
    expect(resultado).toMatchObject({ statusHttp: null, sucesso: false });
    expect(resultado.erro).not.toContain(DO_ASSINANTE);
  });
});
