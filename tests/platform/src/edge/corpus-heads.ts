import {
  auth,
  type Caso,
  CRLF,
  chunk,
  cru,
  doAtacante,
  escondidoInteiro,
  host,
  pedido,
  post,
  ULTIMO,
} from './corpus-tools';

/** Chunked bodies out of the ordinary, heads out of the ordinary, request targets, limits and slow clients. */

const te = ['Transfer-Encoding: chunked'];
const chunked = (nome: string, corpo: (c: { host: string; auth: string }) => string) => post(nome, () => te, corpo);

const chunks: Caso[] = [
  chunked('chunk: size over 2^64', () => `fffffffffffffffff1${CRLF}abc${CRLF}${ULTIMO}`),
  chunked('chunk: size in 0x form', () => `0x3${CRLF}abc${CRLF}${ULTIMO}`),
  chunked('chunk: size with a plus sign', () => `+3${CRLF}abc${CRLF}${ULTIMO}`),
  chunked('chunk: negative size', (c) => `-3${CRLF}${escondidoInteiro(c)}${CRLF}${ULTIMO}`),
  chunked('chunk: size with a space before', () => ` 3${CRLF}abc${CRLF}${ULTIMO}`),
  chunked('chunk: size in upper-case hex', () => `A${CRLF}abcdefghij${CRLF}${ULTIMO}`),
  chunked('chunk: an extension', () => `3;nome=valor${CRLF}abc${CRLF}${ULTIMO}`),
  chunked('chunk: a quoted extension', () => `3;nome="a;b"${CRLF}abc${CRLF}${ULTIMO}`),
  chunked('chunk: an extension of 20 KiB', () => `3;${'x'.repeat(20_000)}${CRLF}abc${CRLF}${ULTIMO}`),
  chunked('chunk: an extension with a bare CR', () => `3;a\rb${CRLF}abc${CRLF}${ULTIMO}`),
  chunked('chunk: a bare LF after the size', () => `3\nabc${CRLF}${ULTIMO}`),
  chunked('chunk: data not ended by CRLF', (c) => `3${CRLF}abcX${CRLF}${ULTIMO}${escondidoInteiro(c)}`),
  chunked('chunk: data longer than its size', (c) => `3${CRLF}abc${escondidoInteiro(c)}${CRLF}${ULTIMO}`),
  chunked(
    'chunk: the last chunk without its CRLF, then a request',
    (c) => `3${CRLF}abc${CRLF}0${CRLF}${escondidoInteiro(c)}`,
  ),
  chunked('chunk: a trailer naming Content-Length', () => `3${CRLF}abc${CRLF}0${CRLF}Content-Length: 50${CRLF}${CRLF}`),
  chunked('chunk: a trailer that is a request line', (c) => `3${CRLF}abc${CRLF}0${CRLF}${escondidoInteiro(c)}`),
  chunked('chunk: a size with leading zeros', () => `0003${CRLF}abc${CRLF}${ULTIMO}`),
  chunked('chunk: two chunks, then the last', () => chunk('abc') + chunk('defgh') + ULTIMO),
];

/** Header lines: folded, with other line ends, whitespace before the colon, control bytes. */
const cabecalhos: Caso[] = [
  post(
    'obs-fold: a header continued on a line starting with SP',
    () => ['X-Dobra: a', ' b', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'obs-fold: a header continued on a line starting with HTAB',
    () => ['X-Dobra: a', '\tb', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'obs-fold: Content-Length continued',
    () => ['Content-Length: 3', ' 0'],
    () => 'abc',
  ),
  cru('obs-fold: the first header line starts with SP', (c) =>
    pedido('POST /eventos HTTP/1.1', [' X-A: b', host(c), auth(c), 'Content-Length: 3'], 'abc'),
  ),
  cru('line ends: bare LF throughout', (c) =>
    pedido('POST /eventos HTTP/1.1', [host(c), auth(c), 'Content-Length: 3'], 'abc', '\n'),
  ),
  cru(
    'line ends: bare LF on one header',
    (c) => `POST /eventos HTTP/1.1${CRLF}${host(c)}\n${auth(c)}${CRLF}Content-Length: 3${CRLF}${CRLF}abc`,
  ),
  cru('line ends: bare CR throughout', (c) =>
    pedido('POST /eventos HTTP/1.1', [host(c), auth(c), 'Content-Length: 3'], 'abc', '\r'),
  ),
  cru(
    'line ends: a bare CR hiding a Content-Length',
    (c) =>
      `POST /eventos HTTP/1.1${CRLF}${host(c)}${CRLF}${auth(c)}${CRLF}X-A: b\rContent-Length: 40${CRLF}Content-Length: 3${CRLF}${CRLF}abc`,
  ),
  cru(
    'line ends: the head ended by LF LF',
    (c) => `POST /eventos HTTP/1.1${CRLF}${host(c)}${CRLF}${auth(c)}${CRLF}Content-Length: 3\n\nabc`,
  ),
  cru(
    'line ends: the head ended by CRLF LF',
    (c) => `POST /eventos HTTP/1.1${CRLF}${host(c)}${CRLF}${auth(c)}${CRLF}Content-Length: 3${CRLF}\nabc`,
  ),
  post(
    'whitespace before the colon: Content-Length',
    () => ['Content-Length : 3'],
    () => 'abc',
  ),
  post(
    'whitespace before the colon: a tab before Host',
    () => ['Host\t: outro'],
    () => '',
  ),
  cru('whitespace before the colon: Authorization', (c) =>
    pedido('GET /eventos HTTP/1.1', [host(c), `Authorization : ${c.auth}`]),
  ),
  post(
    'control bytes: NUL in a name',
    () => ['X-\x00A: b', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: NUL in a value',
    () => ['X-A: b\x00c', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: DEL in a name',
    () => ['X-\x7fA: b', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: DEL in a value',
    () => ['X-A: b\x7fc', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: \\x01 in a value',
    () => ['X-A: b\x01c', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: \\x1b in a name',
    () => ['X\x1bA: b', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: a byte over 0x7f in a name',
    () => ['X-\xe9: b', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: a byte over 0x7f in a value',
    () => ['X-A: caf\xe9', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: a name with a space',
    () => ['X A: b', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: an empty name',
    () => [': b', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'control bytes: a line without a colon',
    () => ['X-Sem-Dois-Pontos', 'Content-Length: 3'],
    () => 'abc',
  ),
  cru('control bytes: NUL in the path', (c) => doAtacante(c, 'GET /eventos\x00/x HTTP/1.1', [])),
  cru('control bytes: DEL in the path', (c) => doAtacante(c, 'GET /eventos\x7f/x HTTP/1.1', [])),
  cru('control bytes: a tab in the request line', (c) => doAtacante(c, 'GET\t/eventos HTTP/1.1', [])),
  post(
    'Host: two of them',
    () => ['Host: outro.example'],
    () => '',
  ),
  cru('Host: none', (c) => pedido('GET /eventos HTTP/1.1', [auth(c)])),
  cru('Host: empty', (c) => pedido('GET /eventos HTTP/1.1', ['Host:', auth(c)])),
  cru('Host: with userinfo', (c) => pedido('GET /eventos HTTP/1.1', [`Host: usuario@${c.host}`, auth(c)])),
  cru('Host: with a space', (c) => pedido('GET /eventos HTTP/1.1', ['Host: a b', auth(c)])),
  cru('Authorization: two of them', (c) =>
    pedido('GET /eventos HTTP/1.1', [host(c), auth(c), 'Authorization: Bearer outro']),
  ),
];

/** Request targets and paths that could reach another service, or /metrics. */
const alvos: Caso[] = [
  cru('target: absolute-form', (c) => doAtacante(c, `GET http://${c.host}/eventos HTTP/1.1`, [])),
  cru('target: absolute-form naming another host', (c) =>
    doAtacante(c, 'GET http://outro.example/perfil-de-acesso HTTP/1.1', []),
  ),
  cru('target: absolute-form with https', (c) => doAtacante(c, `GET https://${c.host}/eventos HTTP/1.1`, [])),
  cru('target: absolute-form to /metrics', (c) => doAtacante(c, `GET http://${c.host}/metrics HTTP/1.1`, [])),
  cru('target: CONNECT', (c) => doAtacante(c, `CONNECT ${c.host} HTTP/1.1`, [])),
  cru('target: CONNECT to another port', (c) => doAtacante(c, 'CONNECT 127.0.0.1:5432 HTTP/1.1', [])),
  cru('target: OPTIONS asterisk', (c) => doAtacante(c, 'OPTIONS * HTTP/1.1', [])),
  cru('target: GET asterisk', (c) => doAtacante(c, 'GET * HTTP/1.1', [])),
  cru('target: no leading slash', (c) => doAtacante(c, 'GET eventos HTTP/1.1', [])),
  cru('target: two spaces before the target', (c) => doAtacante(c, 'GET  /eventos HTTP/1.1', [])),
  cru('target: a space inside', (c) => doAtacante(c, 'GET /eventos /perfil-de-acesso HTTP/1.1', [])),
  ...[
    '/evento%2F..%2Fperfil-de-acesso',
    '/eventos%2F..%2Fperfil-de-acesso',
    '/%65ventos',
    '//eventos',
    '//perfil-de-acesso',
    '/eventos/../perfil-de-acesso',
    '/eventos/..%2Fperfil-de-acesso',
    '/eventos/%2e%2e/perfil-de-acesso',
    '/eventos/./../funcao',
    '/eventos\\..\\perfil-de-acesso',
    '/eventos;/../perfil-de-acesso',
    '/metrics',
    '/METRICS',
    '/%6detrics',
    '/eventos/../metrics',
    '/eventos/%2e%2e/metrics',
    '/eventos/..%2fmetrics',
    '/eventos?x=/../metrics',
    '/.well-known/jwks.json/../../metrics',
  ].map((caminho) => cru(`path: ${caminho}`, (c) => doAtacante(c, `GET ${caminho} HTTP/1.1`, []))),
];

/** Versions, methods, Expect and Upgrade. */
const outros: Caso[] = [
  post(
    'Expect: 100-continue with its body',
    () => ['Expect: 100-continue', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'Expect: something else',
    () => ['Expect: 200-ok', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'Upgrade: h2c with HTTP2-Settings',
    () => [
      'Connection: Upgrade, HTTP2-Settings',
      'Upgrade: h2c',
      'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA',
      'Content-Length: 3',
    ],
    () => 'abc',
  ),
  cru('Upgrade: websocket', (c) =>
    doAtacante(c, 'GET /eventos HTTP/1.1', [
      'Connection: Upgrade',
      'Upgrade: websocket',
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    ]),
  ),
  cru('version: the HTTP/2 preface', () => `PRI * HTTP/2.0${CRLF}${CRLF}SM${CRLF}${CRLF}`),
  cru('version: HTTP/1.0 keep-alive with a body', (c) =>
    pedido('POST /eventos HTTP/1.0', [host(c), auth(c), 'Connection: keep-alive', 'Content-Length: 3'], 'abc'),
  ),
  cru('version: HTTP/0.9', () => `GET /eventos${CRLF}`),
  cru('version: HTTP/1.2', (c) => doAtacante(c, 'GET /eventos HTTP/1.2', [])),
  cru('version: HTTP/2.0 in a text request line', (c) => doAtacante(c, 'GET /eventos HTTP/2.0', [])),
  cru('method: lower case', (c) => doAtacante(c, 'post /eventos HTTP/1.1', ['Content-Length: 3'], 'abc')),
  cru('method: unknown', (c) => doAtacante(c, 'FOO /eventos HTTP/1.1', [])),
  cru('empty lines before the request line', (c) => CRLF + CRLF + doAtacante(c, 'GET /eventos HTTP/1.1', [])),
];

const muitos = (n: number, tamanhoDoValor: number) =>
  Array.from({ length: n }, (_, i) => `X-Cabecalho-${i}: ${'v'.repeat(tamanhoDoValor)}`);

/** Limits of a head, and clients that are slow or silent. */
const limites: Caso[] = [
  post(
    'limits: 300 headers',
    () => muitos(300, 4),
    () => '',
  ),
  post(
    'limits: one header of 20 KiB',
    () => muitos(1, 20_000),
    () => '',
  ),
  post(
    'limits: headers of 17 KiB in all',
    () => muitos(170, 90),
    () => '',
  ),
  cru('limits: a request line of 20 KiB', (c) => doAtacante(c, `GET /eventos/${'a'.repeat(20_000)} HTTP/1.1`, [])),
  { nome: 'slow: a connection that sends nothing', bytes: () => [''], lento: 'ocioso' },
  {
    nome: 'slow: a head trickled byte by byte',
    bytes: (c) => [doAtacante(c, 'GET /eventos HTTP/1.1', muitos(1, 2_000))],
    lento: 'gotejado',
  },
];

export const CASOS_DE_CABECA: Caso[] = [...chunks, ...cabecalhos, ...alvos, ...outros, ...limites];
