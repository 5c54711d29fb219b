import { auth, type Caso, CRLF, chunk, escondido, escondidoInteiro, host, post, tamanho, ULTIMO } from './corpus-tools';

/** Bodies' framing: two lengths, a length and chunked, chunked disguised, and Connection naming framing headers. */

const clcl: Caso[] = [
  post(
    'CL.CL: two different Content-Lengths',
    (c) => ['Content-Length: 5', `Content-Length: ${tamanho('abcde' + escondido(c))}`],
    (c) => 'abcde' + escondido(c),
  ),
  post(
    'CL.CL: the same Content-Length twice',
    () => ['Content-Length: 5', 'Content-Length: 5'],
    () => 'abcde',
  ),
  post(
    'CL.CL: a list of two lengths',
    (c) => [`Content-Length: 5, ${tamanho('abcde' + escondido(c))}`],
    (c) => 'abcde' + escondido(c),
  ),
  post(
    'CL.CL: a list of one length twice',
    () => ['Content-Length: 5, 5'],
    () => 'abcde',
  ),
  post(
    'CL: with a plus sign',
    () => ['Content-Length: +5'],
    () => 'abcde',
  ),
  post(
    'CL: in hex',
    () => ['Content-Length: 0x5'],
    () => 'abcde',
  ),
  post(
    'CL: with leading zeros',
    () => ['Content-Length: 0005'],
    () => 'abcde',
  ),
  post(
    'CL: negative',
    (_c) => ['Content-Length: -1'],
    (c) => escondidoInteiro(c),
  ),
  post(
    'CL: over 2^64',
    () => ['Content-Length: 99999999999999999999999'],
    () => 'abcde',
  ),
  post(
    'CL: with letters after the digits',
    () => ['Content-Length: 5abc'],
    () => 'abcde',
  ),
  post(
    'CL: with a space inside',
    () => ['Content-Length: 1 0'],
    () => 'abcdeabcde',
  ),
  post(
    'CL: shorter than the body (the rest is a request)',
    () => ['Content-Length: 2'],
    (c) => 'ab' + escondidoInteiro(c),
  ),
];

const clte: Caso[] = [
  post(
    'CL.TE: Content-Length then chunked',
    (c) => [`Content-Length: ${tamanho(ULTIMO + escondido(c))}`, 'Transfer-Encoding: chunked'],
    (c) => ULTIMO + escondido(c),
  ),
  post(
    'TE.CL: chunked then Content-Length',
    () => ['Transfer-Encoding: chunked', 'Content-Length: 3'],
    (c) => chunk('abcdef') + ULTIMO + escondidoInteiro(c),
  ),
  post(
    'CL.TE: chunked disguised as xchunked',
    (_c) => [`Content-Length: 4`, 'Transfer-Encoding: xchunked'],
    (c) => ULTIMO + escondido(c),
  ),
  post(
    'CL.TE: Transfer-Encoding with a space before its colon',
    () => ['Content-Length: 4', 'Transfer-Encoding : chunked'],
    () => ULTIMO,
  ),
  post(
    'CL.TE: chunked, identity with a length',
    () => ['Content-Length: 4', 'Transfer-Encoding: chunked, identity'],
    () => ULTIMO,
  ),
  post(
    'TE.CL: a chunk longer than the length',
    () => ['Content-Length: 4', 'Transfer-Encoding: chunked'],
    (c) => chunk(escondidoInteiro(c)) + ULTIMO,
  ),
];

const tete: Caso[] = [
  post(
    'TE: xchunked',
    () => ['Transfer-Encoding: xchunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: leading space',
    () => ['Transfer-Encoding:  chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: chunked, identity',
    () => ['Transfer-Encoding: chunked, identity'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: identity, chunked',
    () => ['Transfer-Encoding: identity, chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: gzip, chunked',
    () => ['Transfer-Encoding: gzip, chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: two headers, chunked then identity',
    () => ['Transfer-Encoding: chunked', 'Transfer-Encoding: identity'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: two headers, identity then chunked',
    () => ['Transfer-Encoding: identity', 'Transfer-Encoding: chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: two chunked headers',
    () => ['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: a tab before the value',
    () => ['Transfer-Encoding:\tchunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: a tab before the colon',
    () => ['Transfer-Encoding\t: chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: upper-case value',
    () => ['Transfer-Encoding: CHUNKED'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: mixed-case name',
    () => ['tRaNsFeR-eNcOdInG: chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: a vertical tab before the value',
    () => ['Transfer-Encoding:\x0bchunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: underscore for the dash',
    () => ['Transfer_Encoding: chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: chunked with a parameter',
    () => ['Transfer-Encoding: chunked;q=1'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: quoted',
    () => ['Transfer-Encoding: "chunked"'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: chunked in an obs-fold',
    () => ['Transfer-Encoding: identity', ' chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  post(
    'TE: chunked, chunked',
    () => ['Transfer-Encoding: chunked, chunked'],
    () => chunk('abc') + ULTIMO,
  ),
  {
    nome: 'TE: chunked in HTTP/1.0',
    bytes: (c) => [
      `POST /eventos HTTP/1.0${CRLF}${host(c)}${CRLF}${auth(c)}${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}${chunk('abc')}${ULTIMO}`,
    ],
  },
];

/** `Connection` naming headers that frame or authorize the request: a hop must not drop them and keep their effect. */
const connection: Caso[] = [
  post(
    'Connection: keep-alive, Content-Length',
    (c) => ['Connection: keep-alive, Content-Length', `Content-Length: ${tamanho(escondido(c))}`],
    (c) => escondido(c),
  ),
  post(
    'Connection: Content-Length',
    (c) => ['Connection: Content-Length', `Content-Length: ${tamanho(escondidoInteiro(c))}`],
    (c) => escondidoInteiro(c),
  ),
  post(
    'Connection: content-length, in lower case',
    (c) => ['Connection: content-length', `Content-Length: ${tamanho(escondido(c))}`],
    (c) => escondido(c),
  ),
  post(
    'Connection: close, Content-Length',
    (c) => ['Connection: close, Content-Length', `Content-Length: ${tamanho(escondido(c))}`],
    (c) => escondido(c),
  ),
  post(
    'Connection: keep-alive and a second Connection: Content-Length',
    (c) => ['Connection: keep-alive', 'Connection: Content-Length', `Content-Length: ${tamanho(escondido(c))}`],
    (c) => escondido(c),
  ),
  post(
    'Connection: keep-alive, Transfer-Encoding',
    (_c) => ['Connection: keep-alive, Transfer-Encoding', 'Transfer-Encoding: chunked'],
    (c) => chunk(escondido(c)) + ULTIMO,
  ),
  post(
    'Connection: Host',
    () => ['Connection: Host', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'Connection: Authorization',
    () => ['Connection: keep-alive, Authorization', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'Connection: X-Forwarded-For',
    () => ['Connection: X-Forwarded-For', 'X-Forwarded-For: 10.0.0.1', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'Connection: x-request-id',
    () => ['Connection: x-request-id', 'x-request-id: abc', 'Content-Length: 3'],
    () => 'abc',
  ),
  post(
    'Connection: Content-Length, Transfer-Encoding with both',
    (_c) => ['Connection: Content-Length, Transfer-Encoding', 'Content-Length: 5', 'Transfer-Encoding: chunked'],
    () => ULTIMO,
  ),
  post(
    'Connection: Upgrade without an Upgrade',
    () => ['Connection: Upgrade', 'Content-Length: 3'],
    () => 'abc',
  ),
];

export const CASOS_DE_ENQUADRAMENTO: Caso[] = [...clcl, ...clte, ...tete, ...connection];
