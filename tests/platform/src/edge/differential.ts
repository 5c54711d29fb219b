import { HEADERS_TIMEOUT_MS } from '@hub/http';
import type { Caso, Contexto } from './corpus-tools';
import { type Resultado, origem } from './judge';
import { type Alvo, enviar, type Saida } from './raw-client';
import type { Gravador } from './recorder';

/** The request timeout of the suite's own servers (the platform's is 30 s, its headers' 10 s). */
export const REQUEST_TIMEOUT_MS = 700;
/** How long a case's connection is waited for on a server with REQUEST_TIMEOUT_MS (past it, it is cut). */
export const PRAZO_MS = 3 * REQUEST_TIMEOUT_MS;

/** The Host every case is sent with (nginx serves it as its default server). */
export const HOST = 'hub.test';

/** A system under test for one case: where to send, what stands behind it, and who calls. */
export interface Sistema {
  alvo: Alvo;
  /** The recording services behind it (none for a real service reached directly). */
  gravadores: Gravador[];
  tokens: { atacante: string; outro: string };
  rotear(caminho: string): string | undefined;
  /** The latest a connection is waited for (past the system's own request timeout). */
  prazoMs: number;
  /** End the client's writing after the bytes (a service with the platform's 30 s timeouts). */
  meioFechar?: boolean;
  /**
   * The system re-frames every request it passes on (nginx): the case also goes to this lenient
   * reference, and a request the strict one refused may pass when the lenient one parsed it alike.
   */
  leniente?: Gravador;
}

const PREFIXO: Record<string, string> = { access: '/perfil-de-acesso', function: '/funcao', 'hub-api': '/eventos' };

/** The path prefix of the service the case's first request line is for (hub-api's when none). */
function prefixoDe(primeira: string, rotear: Sistema['rotear']): string {
  const alvo = /^(?:\r?\n)*\S+ +(\S+)/.exec(primeira)?.[1];
  const servico = alvo === undefined ? undefined : rotear(origem(alvo).split('?')[0]!);
  return PREFIXO[servico ?? 'hub-api'] ?? '/eventos';
}

/** The case's first request line (as written, with the caller's credentials) and its clean request after. */
function proprios(primeira: string, mesma: string, authorization: string) {
  const linha = /^(?:\r?\n)*([A-Z]+) +(\S+) HTTP\/1\.[01]\r?\n/.exec(primeira);
  const lista = [{ method: 'GET', url: mesma, authorization }];
  if (linha && primeira.includes(`Authorization: ${authorization}`))
    lista.push({ method: linha[1]!, url: linha[2]!, authorization });
  return lista;
}

let sequencia = 0;

/** A clean GET of `auth`'s to `caminho`, alone on its connection. */
const limpo = (caminho: string, auth: string, fim = '') =>
  `GET ${caminho} HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: ${auth}\r\n${fim}\r\n`;

/**
 * Runs one case: its bytes and then a clean request of the same caller on one connection, to the
 * reference and to the system; then another caller's clean request on a new connection to the
 * system. The recorders are emptied first; what they hold after is the case's.
 */
export async function rodarCaso(caso: Caso, referencia: Gravador, sistema: Sistema): Promise<Resultado> {
  const n = ++sequencia;
  const atacante = `Bearer ${sistema.tokens.atacante}`;
  const outro = `Bearer ${sistema.tokens.outro}`;
  const contexto: Contexto = { host: HOST, auth: atacante };
  const bytes = caso.bytes(contexto);
  const prefixo = prefixoDe(bytes[0] ?? '', sistema.rotear);
  const mesma = `${prefixo}/limpo-${n}-mesma-conexao`;
  const partes = [...bytes, limpo(mesma, atacante)];
  for (const g of [referencia, ...(sistema.leniente ? [sistema.leniente] : []), ...sistema.gravadores]) g.zerar();
  const envio = { ate: mesma, meioFechar: sistema.meioFechar };
  for (const ref of [referencia, sistema.leniente])
    if (ref) await enviar({ host: '127.0.0.1', port: ref.port }, partes, { ...envio, prazoMs: PRAZO_MS });
  const saida = await enviar(sistema.alvo, partes, { ...envio, prazoMs: sistema.prazoMs });
  const caminho = `${prefixo}/limpo-${n}-outro-chamador`;
  const depois = await enviar(sistema.alvo, [limpo(caminho, outro, 'Connection: close\r\n')], {
    ate: caminho,
    prazoMs: sistema.prazoMs,
  });
  return {
    referencia: [...referencia.registros],
    leniente: sistema.leniente ? [...sistema.leniente.registros] : undefined,
    proprios: sistema.leniente ? proprios(bytes[0] ?? '', mesma, atacante) : undefined,
    upstream: sistema.gravadores.flatMap((g) => g.registros),
    saida,
    limpo: { caminho, authorization: outro, saida: depois },
    rotear: sistema.rotear,
  };
}

/**
 * A slow case: a connection that sends nothing, or a head sent one byte every 20 ms. The system
 * must cut it itself within the platform's header timeout (HEADERS_TIMEOUT_MS, 10 s; the suite's
 * servers have a far shorter one) and, for the trickled head, before the head is whole.
 */
export async function rodarLento(
  caso: Caso,
  sistema: Pick<Sistema, 'alvo' | 'tokens'>,
  prazoMs = HEADERS_TIMEOUT_MS,
): Promise<{ saida: Saida; total: number }> {
  const bytes = caso.bytes({ host: HOST, auth: `Bearer ${sistema.tokens.atacante}` }).join('');
  const total = Buffer.byteLength(bytes, 'latin1');
  const saida = await enviar(sistema.alvo, [bytes], {
    prazoMs,
    gotejarMs: caso.lento === 'gotejado' ? 20 : undefined,
  });
  return { saida, total };
}
