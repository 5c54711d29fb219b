import { sendRaw } from '../http-client';
import type { Platform } from '../platform';

/** One panel read during a fault: when it was answered, and how. */
export interface Leitura {
  /** When it was sent, and when it was answered. */
  enviadaEm: number;
  em: number;
  status: number;
  retryAfter?: string;
  problem: boolean;
  /** problem+json `codigo`, when there is one. */
  codigo?: string;
}

/**
 * An operator's panel reading while the fault runs: the events' summary and a page of deliveries,
 * through the gateway, by two readers each waiting `intervaloMs` between its reads until `parar`. These are the reads
 * hub-api sends to HUB_DATABASE_READ_URL when it has one (docs/decisions/read-replica.md).
 */
export function lerPainelDurante(platform: Platform, token: string, intervaloMs = 200) {
  const leituras: Leitura[] = [];
  let ativo = true;
  const caminhos = ['/evento/resumo', '/entrega?tamanho=1'];
  // Two operators, each reading one path after the other.
  const laco = async (primeiro: number) => {
    for (let i = primeiro; ativo; i += 1) {
      const enviadaEm = Date.now();
      const resposta = await sendRaw(platform.gatewayUrl, {
        method: 'GET',
        path: caminhos[i % caminhos.length]!,
        headers: { authorization: `Bearer ${token}` },
        timeoutMs: 10_000,
      });
      leituras.push({
        enviadaEm,
        em: Date.now(),
        status: resposta.status,
        retryAfter: resposta.headers?.['retry-after'] as string | undefined,
        problem: resposta.contentType.startsWith('application/problem+json'),
        ...(resposta.status === 200 ? {} : { codigo: codigoDe(resposta.text) }),
      });
      await new Promise((resolve) => setTimeout(resolve, intervaloMs));
    }
  };
  const lacos = [laco(0), laco(1)];
  return {
    parar: async (): Promise<Leitura[]> => {
      ativo = false;
      await Promise.all(lacos);
      return leituras;
    },
  };
}

const codigoDe = (texto: string) => {
  try {
    return String((JSON.parse(texto) as { codigo?: unknown }).codigo);
  } catch {
    return texto.slice(0, 80);
  }
};

/** Reads that break the contract: anything but 200, or a 503 problem+json with Retry-After. */
export const leiturasIndevidas = (leituras: Leitura[]) =>
  leituras.filter((l) => l.status !== 200 && !(l.status === 503 && l.problem && l.retryAfter));
