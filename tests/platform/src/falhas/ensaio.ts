import { api, sendRaw } from '../http-client';
import type { Platform } from '../platform';
import type { Assinante } from '../e2e/receptor';

/**
 * The fault drill of issue 18, shared by the scenarios of this folder: a burst of publications
 * through the gateway at a steady pace, a fault provoked while it runs, then the checks. A
 * publisher here behaves as @hub/client does: one Idempotency-Key per event, kept while it sends
 * the event again after a refusal (waiting the Retry-After given, at most 2 s), so every event is
 * accepted in the end and each refusal is counted and looked at.
 */

/** Two subscriptions of one type, each to a path of the test's subscriber. */
export const CAMINHOS = ['/a', '/b'] as const;

export interface Cenario {
  platform: Platform;
  assinante: Assinante;
  /** How many events, and at what pace (events per second). */
  eventos: number;
  porSegundo: number;
  /** After how many events were sent the fault starts. */
  falhaApos: number;
  /** The fault: resolves when it is over (the dependency back, or left down). */
  falha: () => Promise<void>;
  /** How long the deliveries may take to arrive after the burst (default 90 s). */
  entregasEmMs?: number;
  /** The entity of event n (default `pedido-n`: one event per entity). */
  entidadeDe?: (n: number) => string;
  /** The dados of event n (default `{ n }`). */
  dadosDe?: (n: number) => Record<string, unknown>;
  /**
   * Whether the fault itself kills and restarts services (default false): then a service not running
   * for a moment is the fault, and publishers keep retrying instead of giving up.
   */
  reiniciaServicos?: boolean;
}

/** A publication answered with anything but 2xx. */
export interface Recusa {
  n: number;
  status: number;
  /** problem+json `codigo`, or what came instead (`text/html …`, `ECONNRESET`). */
  codigo: string;
  /** Whether the answer was problem+json. */
  problem: boolean;
  retryAfter?: string;
  em: number;
}

export interface Resultado {
  /** event id → its delivery ids, per accepted event. */
  aceitos: Map<string, string[]>;
  /** When each event was accepted: the sending of the attempt answered 2xx, and its answer. */
  aceitacoes: { n: number; enviadaEm: number; em: number }[];
  recusas: Recusa[];
  /** Refusals that break the contract: not problem+json, a 500, no answer, a 503 without Retry-After. */
  indevidas: Recusa[];
  /** Events never accepted (still refused when their time ran out). */
  abandonados: number[];
  falha: { inicio: number; fim: number; erro?: string };
  fimDaRajada: number;
  /** The processes before the burst. */
  antes: ReturnType<Platform['processos']>;
}

/** Application, type, version and the two subscriptions; the publisher's token. */
export async function prepararPublicacao(platform: Platform, assinante: Assinante, nome: string) {
  const master = await platform.userToken(`master.${nome}@empresa.com.br`, { master: true });
  const gw = async <T = { id: string }>(method: string, path: string, body?: unknown) => {
    const resposta = await api<T>(platform.gatewayUrl, master, method, path, body);
    if (resposta.status >= 300)
      throw new Error(`${method} ${path}: ${resposta.status} ${JSON.stringify(resposta.body)}`);
    return resposta;
  };
  const loja = await gw('POST', '/aplicativo', { nome: `Loja ${nome}`, client_id: `loja-${nome}` });
  const erp = await gw('POST', '/aplicativo', { nome: `ERP ${nome}`, client_id: `erp-${nome}` });
  const tipo = await gw('POST', '/tipo-de-evento', { nome: `pedido.${nome}`, aplicativo_id: loja.body.id });
  await gw('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.body.id, esquema: { type: 'object' } });
  for (const caminho of CAMINHOS)
    await gw('POST', '/assinatura', {
      aplicativo_assinante_id: erp.body.id,
      tipo_de_evento_id: tipo.body.id,
      versao_do_esquema: 1,
      url_de_destino: assinante.url(caminho),
      maximo_de_tentativas: 10,
    });
  return { tipoId: tipo.body.id, token: await platform.applicationToken(`loja-${nome}`) };
}

const PROBLEM = /^application\/problem\+json/;

/** Runs the burst with the fault in it; resolves when every event was accepted or given up. */
export async function rajadaComFalha(
  cenario: Cenario,
  publicacao: { tipoId: string; token: string },
): Promise<Resultado> {
  const { platform, eventos, porSegundo, falhaApos } = cenario;
  const aceitos = new Map<string, string[]>();
  const aceitacoes: Resultado['aceitacoes'] = [];
  const recusas: Recusa[] = [];
  const abandonados: number[] = [];
  const antes = platform.processos();
  const falha: Resultado['falha'] = { inicio: 0, fim: 0 };
  let emFalha: Promise<void> | undefined;
  const inicio = Date.now();
  const algumSaiu = () => !cenario.reiniciaServicos && platform.processos().some((p) => !p.running);

  const publicar = async (n: number) => {
    const corpo = Buffer.from(
      JSON.stringify({
        tipo_de_evento_id: publicacao.tipoId,
        versao_do_esquema: 1,
        entidade_id: cenario.entidadeDe?.(n) ?? `pedido-${n}`,
        dados: cenario.dadosDe?.(n) ?? { n },
      }),
    );
    // Long enough to outlast any outage the scenarios provoke; an event still refused then is given
    // up, and at once when a service exited (nothing would take it; the checks report the exit).
    const prazo = Date.now() + 60_000;
    for (let tentativa = 0; Date.now() < prazo && !algumSaiu(); tentativa += 1) {
      const enviadaEm = Date.now();
      const resposta = await sendRaw(platform.gatewayUrl, {
        method: 'POST',
        path: '/eventos',
        headers: {
          authorization: `Bearer ${publicacao.token}`,
          'content-type': 'application/json',
          'idempotency-key': `falha-${n}`,
        },
        body: corpo,
        timeoutMs: 15_000,
      });
      if (resposta.status >= 200 && resposta.status < 300) {
        const evento = JSON.parse(resposta.text) as { id: string; entregas: { id: string }[] };
        aceitos.set(
          evento.id,
          evento.entregas.map((e) => e.id),
        );
        aceitacoes.push({ n, enviadaEm, em: Date.now() });
        return;
      }
      const retryAfter = resposta.headers?.['retry-after'];
      const problem = PROBLEM.test(resposta.contentType);
      recusas.push({
        n,
        status: resposta.status,
        codigo: resposta.error ?? (problem ? codigoDe(resposta.text) : resposta.contentType || 'sem corpo'),
        problem,
        ...(retryAfter === undefined ? {} : { retryAfter: String(retryAfter) }),
        em: Date.now(),
      });
      // Retry-After when given (at most 2 s), else backing off from 250 ms as @hub/client does.
      const espera =
        retryAfter === undefined
          ? Math.min(2_000, 250 * 2 ** tentativa)
          : Math.min(2_000, Math.max(100, Number(retryAfter) * 1000 || 1_000));
      await new Promise((resolve) => setTimeout(resolve, espera));
    }
    abandonados.push(n);
  };

  const publicando: Promise<void>[] = [];
  for (let n = 0; n < eventos; n += 1) {
    const quando = inicio + (n * 1000) / porSegundo;
    const agora = Date.now();
    if (quando > agora) await new Promise((resolve) => setTimeout(resolve, quando - agora));
    if (n === falhaApos) {
      falha.inicio = Date.now();
      emFalha = cenario.falha().then(
        () => {
          falha.fim = Date.now();
        },
        (error: Error) => {
          falha.fim = Date.now();
          falha.erro = error.message;
        },
      );
    }
    publicando.push(publicar(n));
  }
  await Promise.all(publicando);
  const fimDaRajada = Date.now();
  await emFalha;
  return { aceitos, aceitacoes, recusas, indevidas: recusas.filter(indevida), abandonados, falha, fimDaRajada, antes };
}

function codigoDe(text: string): string {
  try {
    return String((JSON.parse(text) as { codigo?: unknown }).codigo ?? 'problem sem codigo');
  } catch {
    return 'problem+json ilegível';
  }
}

/**
 * What a publisher may be told while a dependency is away: problem+json 503 (or 429) with
 * Retry-After, so it sends the event again. No answer, a 500, the gateway's 502/504 (hub-api gone or
 * stuck) or an answer without Retry-After break the contract.
 */
const indevida = (r: Recusa) => !r.problem || (r.status !== 503 && r.status !== 429) || r.retryAfter === undefined;
