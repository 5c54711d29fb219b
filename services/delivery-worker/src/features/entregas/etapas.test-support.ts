import { randomUUID } from 'node:crypto';
import type { ConsumeMessage } from '@hub/broker';
import { isolatedDeliveryTopology, type TrabalhoDeEntrega } from '@hub/contracts';
import { createLogger } from '@hub/log';
import type { Counter } from 'prom-client';
import { criarMetricas } from '../../metricas';
import type { EntregasRepository, Reivindicada } from './entregas.repository';
import type { ConfigDasEntregas, Recursos } from './recursos';
import type { ResultadoDoEnvio } from './remetente';

// What the unit tests of the delivery stages share: fakes of the repository and the broker, real
// metrics (prom-client, in memory), a fixed clock. No PostgreSQL, no RabbitMQ.

/** A message published by a stage, as the fake broker kept it. */
export interface Publicado {
  exchange: string;
  routingKey: string;
  content: Buffer;
  options: { messageId?: string; expiration?: string | number; headers?: Record<string, unknown>; mandatory?: boolean };
}

/** A repository whose statements answer nothing unless a test says otherwise (each a jest.fn). */
export function repoFalso(respostas: Partial<Record<keyof EntregasRepository, unknown>> = {}) {
  const vazio = async () => [];
  const repo = {
    reivindicar: jest.fn(vazio),
    liberar: jest.fn(vazio),
    envenenar: jest.fn(vazio),
    registrar: jest.fn(vazio),
    recolherPerdidas: jest.fn(vazio),
    passarAVez: jest.fn(vazio),
    recolherVezesPerdidas: jest.fn(vazio),
    ...respostas,
  };
  return repo as unknown as { [K in keyof EntregasRepository]: jest.Mock } & EntregasRepository;
}

export const PASSOS_MS = [5_000, 30_000, 120_000, 600_000] as const;

/** The resources of a stage, on fakes: `publicados` is what went to the broker, in order. */
export function recursosFalsos(
  opcoes: {
    repo?: ReturnType<typeof repoFalso>;
    config?: Partial<ConfigDasEntregas>;
    publicar?: () => Promise<void>;
  } = {},
) {
  const publicados: Publicado[] = [];
  const repo = opcoes.repo ?? repoFalso();
  const recursos: Recursos = {
    config: {
      passosMs: PASSOS_MS,
      esperaPorDestinoMs: 1_000,
      espacamentoDosRegistrosMs: 0,
      tentativasDoConsumidor: 5,
      urlDoEsquema: (nome, versao) => `https://gateway.test/esquema/${nome}/${versao}`,
      ...opcoes.config,
    },
    repo,
    broker: {
      publish: jest.fn(async (exchange: string, routingKey: string, content: Buffer, options = {}) => {
        await opcoes.publicar?.();
        publicados.push({ exchange, routingKey, content, options });
      }),
    },
    topologia: isolatedDeliveryTopology('unidade'),
    metricas: criarMetricas(),
    relogio: { agora: () => Date.parse('2026-12-02T10:00:00Z'), aleatorio: () => 1 },
    logger: createLogger('delivery-worker-unidade', 'silent'),
  };
  return { recursos, repo, publicados };
}

/** A counter's value for these labels (0 when never counted). */
export async function contado(counter: Counter<string>, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await counter.get();
  const linha = values.find((v) => Object.entries(labels).every(([k, valor]) => v.labels[k] === valor));
  return linha?.value ?? 0;
}

export function trabalho(extra: Partial<TrabalhoDeEntrega> = {}): TrabalhoDeEntrega {
  return {
    entrega_id: randomUUID(),
    evento_id: randomUUID(),
    assinatura_id: randomUUID(),
    url_de_destino: 'https://recebe.example/webhook',
    corpo: '{"id":"evt","dados":{}}',
    request_id: null,
    ...extra,
  };
}

/** A job's message as the consumer hands it over. */
export function mensagem(t: TrabalhoDeEntrega, headers: Record<string, unknown> = {}): ConsumeMessage {
  return {
    content: Buffer.from(JSON.stringify(t)),
    fields: { deliveryTag: 1, redelivered: false, exchange: '', routingKey: '', consumerTag: 'c' },
    properties: { messageId: t.entrega_id, contentType: 'application/json', headers },
  } as unknown as ConsumeMessage;
}

/** A delivery as its claim returns it. */
export function reivindicada(t: TrabalhoDeEntrega, extra: Partial<Reivindicada> = {}): Reivindicada {
  return {
    id: t.entrega_id,
    situacao: 'em_andamento',
    tentativas_no_ciclo_atual: 0,
    maximo_de_tentativas: 5,
    url_de_destino: t.url_de_destino,
    ultimo_erro: null,
    sequencia: null,
    assinatura_id: t.assinatura_id,
    entidade_id: 'pedido-1',
    formato: 'standard-webhooks',
    ...extra,
  };
}

/** A POST's result. */
export function resultado(extra: Partial<ResultadoDoEnvio> = {}): ResultadoDoEnvio {
  const sucesso =
    extra.sucesso ?? (extra.statusHttp === undefined || (extra.statusHttp !== null && extra.statusHttp < 300));
  return {
    iniciadaEm: new Date('2026-12-02T10:00:00Z'),
    duracaoMs: 40,
    statusHttp: 200,
    sucesso,
    resposta: '',
    erro: sucesso ? null : `HTTP ${extra.statusHttp ?? 'none'}`,
    ...extra,
  };
}
