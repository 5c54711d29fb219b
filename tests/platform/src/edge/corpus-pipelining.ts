import { type Caso, doAtacante, escondidoInteiro, tamanho } from './corpus-tools';

/** Several requests on one connection, their lengths wrong, or split over writes. */
export const CASOS_DE_PIPELINING: Caso[] = [
  {
    nome: 'pipelining: two requests at once',
    bytes: (c) => [
      doAtacante(c, 'POST /eventos HTTP/1.1', ['Content-Length: 3'], 'abc') +
        doAtacante(c, 'GET /eventos/segundo HTTP/1.1', []),
    ],
  },
  {
    nome: 'pipelining: a length too long swallows the next request',
    bytes: (c) => [
      doAtacante(c, 'POST /eventos HTTP/1.1', ['Content-Length: 40'], 'abc') +
        doAtacante(c, 'GET /eventos/segundo HTTP/1.1', []),
    ],
  },
  {
    nome: 'pipelining: a GET with a body and no length',
    bytes: (c) => [doAtacante(c, 'GET /eventos HTTP/1.1', [], escondidoInteiro(c))],
  },
  {
    nome: 'pipelining: a GET with a Content-Length and a body',
    bytes: (c) => [
      doAtacante(c, 'GET /eventos HTTP/1.1', [`Content-Length: ${tamanho(escondidoInteiro(c))}`], escondidoInteiro(c)),
    ],
  },
  {
    nome: 'pipelining: a request split across writes, body first in the next',
    bytes: (c) => [
      doAtacante(c, 'POST /eventos HTTP/1.1', ['Content-Length: 6']),
      'abc',
      'def' + doAtacante(c, 'GET /eventos/segundo HTTP/1.1', []),
    ],
  },
  {
    nome: 'pipelining: three requests, the middle one with no credentials',
    bytes: (c) => [
      doAtacante(c, 'GET /eventos/um HTTP/1.1', []) +
        escondidoInteiro(c, '/perfil-de-acesso/dois') +
        doAtacante(c, 'GET /eventos/tres HTTP/1.1', []),
    ],
  },
  {
    nome: 'pipelining: HEAD then GET',
    bytes: (c) => [doAtacante(c, 'HEAD /eventos HTTP/1.1', []) + doAtacante(c, 'GET /eventos/segundo HTTP/1.1', [])],
  },
  {
    nome: 'pipelining: a DELETE with a body',
    bytes: (c) => [
      doAtacante(c, 'DELETE /eventos/x HTTP/1.1', ['Content-Length: 3'], 'abc') +
        doAtacante(c, 'GET /eventos/segundo HTTP/1.1', []),
    ],
  },
];
