/** What a case's bytes are made with: the Host the target expects, and the attacker's Authorization value. */
export interface Contexto {
  host: string;
  /** `Bearer <token>` of the caller sending the case. */
  auth: string;
}

export interface Caso {
  nome: string;
  /** The bytes, written one part after the other on one connection (latin1: one char, one byte). */
  bytes(c: Contexto): string[];
  /** `ocioso`: a connection that sends nothing; `gotejado`: a head sent one byte at a time. */
  lento?: 'ocioso' | 'gotejado';
}

export const CRLF = '\r\n';

/** A request's head (and body) from its request line and header lines, each line ended by `fim`. */
export const pedido = (linha: string, campos: string[], corpo = '', fim = CRLF) =>
  linha + fim + campos.map((c) => c + fim).join('') + fim + corpo;

export const host = (c: Contexto) => `Host: ${c.host}`;
export const auth = (c: Contexto) => `Authorization: ${c.auth}`;
export const tamanho = (texto: string) => String(Buffer.byteLength(texto, 'latin1'));

/** A request of the attacker's to `caminho` with its Host and Authorization, then `campos` and `corpo`. */
export const doAtacante = (c: Contexto, linha: string, campos: string[], corpo = '') =>
  pedido(linha, [host(c), auth(c), ...campos], corpo);

/** The head of a request hidden in a body, left open: the next request on the connection completes it. */
export const escondido = (c: Contexto, caminho = '/perfil-de-acesso/contrabando') =>
  `GET ${caminho} HTTP/1.1${CRLF}Host: ${c.host}${CRLF}X-Ignorar: `;

/** A whole request hidden in a body, without credentials. */
export const escondidoInteiro = (c: Contexto, caminho = '/funcao/contrabando') =>
  `GET ${caminho} HTTP/1.1${CRLF}Host: ${c.host}${CRLF}${CRLF}`;

/** A case of one POST /eventos with `campos` after Host and Authorization and `corpo`. */
export const post = (
  nome: string,
  campos: (c: Contexto) => string[],
  corpo: (c: Contexto) => string = () => '',
): Caso => ({
  nome,
  bytes: (c) => [doAtacante(c, 'POST /eventos HTTP/1.1', campos(c), corpo(c))],
});

/** A case of one request whose whole text is `texto` (for request lines and heads out of the ordinary). */
export const cru = (nome: string, texto: (c: Contexto) => string): Caso => ({ nome, bytes: (c) => [texto(c)] });

/** A chunked body's chunk. */
export const chunk = (dados: string) => `${dados.length.toString(16)}${CRLF}${dados}${CRLF}`;
export const ULTIMO = `0${CRLF}${CRLF}`;
