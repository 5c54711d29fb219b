import { type Broker, retryQueueName } from '@hub/broker';
import { DELIVERY_TOPOLOGY, QUEUES } from '@hub/contracts';
import { AppError, notFound } from '@hub/http';
import type { Db } from '../../db';
import { espiarFilaDeErro } from './espiar';
import { filaRepository } from './fila.repository';
import type { Fila, Papel } from './fila.schemas';
import type { TravaDaFilaDeErro } from './trava';

export interface FilasDeps {
  broker: Broker;
  db: Db;
  /** The readers' locks of the error queue (shared with the reconciliation). */
  trava: TravaDaFilaDeErro;
  /** DELIVERY_RETRY_DELAYS: one queue of the retry ladder per distinct step. */
  passosMs: readonly number[];
}

/** Seconds a client is told to wait when RabbitMQ is not answering (a restart takes several). */
const BROKER_RETRY_AFTER_S = 5;

export const brokerIndisponivel = () =>
  new AppError(
    503,
    'broker_indisponivel',
    'RabbitMQ is not answering; send the request again after Retry-After',
    undefined,
    {
      'Retry-After': String(BROKER_RETRY_AFTER_S),
    },
  );

/**
 * The queues of the delivery topology (architecture §4, Fila): the work queue, the retry ladder's
 * queue of every step of DELIVERY_RETRY_DELAYS (the workers' setting, read by hub-api too; the ladder
 * is shared, so its depth counts any consumer's retries of that step), the error queue, and the
 * queue of every destination that has one of its own now (architecture §5, fair scheduling), with
 * their depth and consumers as RabbitMQ reports them now.
 */
export function filasDaTopologia({ broker, db, trava, passosMs }: FilasDeps) {
  const nomes: [string, Papel][] = [
    [QUEUES.entregas, 'trabalho'],
    ...[...new Set(passosMs)].map((ms): [string, Papel] => [retryQueueName(ms), 'atraso']),
    [QUEUES.entregasErro, 'erro'],
  ];

  const repo = filaRepository(db);
  const dosDestinos = () => repo.destinosComFila();

  async function ler(nome: string, papel: Papel, origem: string | null = null): Promise<Fila> {
    // Asked while RabbitMQ is away, the broker would wait for its reconnection: GET /fila and every
    // scrape of /metrics hung for the whole outage (docs/benchmarks.md, "Operator drill").
    if (!broker.connected) throw brokerIndisponivel();
    try {
      const { messageCount, consumerCount } = await broker.checkQueue(nome);
      return { nome, papel, origem, mensagens: messageCount, consumidores: consumerCount, declarada: true };
    } catch (error) {
      // 404 NOT_FOUND closes that channel only; the queue is simply not there yet (or any more).
      if ((error as { code?: number }).code !== 404) throw error;
      return { nome, papel, origem, mensagens: 0, consumidores: 0, declarada: false };
    }
  }

  /** A queue of the topology by name: a fixed one, or the queue of a destination that has one now. */
  async function daTopologia(nome: string): Promise<[string, Papel, string | null]> {
    const achada = nomes.find(([n]) => n === nome);
    if (achada) return [...achada, null];
    const id = /^[0-9a-f-]{36}$/.exec(nome.slice(DELIVERY_TOPOLOGY.filaDoDestino('').length))?.[0];
    if (id && nome === DELIVERY_TOPOLOGY.filaDoDestino(id)) {
      const destino = (await dosDestinos()).find((d) => d.id === id);
      if (destino) return [nome, 'destino', destino.origem];
    }
    throw notFound('queue of the delivery topology');
  }
  const espiar = espiarFilaDeErro({ db, broker, trava });
  /** The destination queues listed last: one that is gone has its inspection channel closed. */
  let listadas = new Set<string>();

  return {
    listar: async () => {
      // Without the database the broker's own queues are still worth showing (and scraping).
      const destinos = await dosDestinos().catch(() => []);
      const agora = new Set(destinos.map((d) => DELIVERY_TOPOLOGY.filaDoDestino(d.id)));
      for (const nome of listadas) if (!agora.has(nome)) broker.forgetQueue(nome);
      listadas = agora;
      return Promise.all([
        ...nomes.map(([nome, papel]) => ler(nome, papel)),
        ...destinos.map((d) => ler(DELIVERY_TOPOLOGY.filaDoDestino(d.id), 'destino', d.origem)),
      ]);
    },
    buscar: async (nome: string): Promise<Fila> => ler(...(await daTopologia(nome))),
    /** Up to `limite` messages of the error queue, left in it (404 outside the topology, 409 for the other queues). */
    espiar: async (nome: string, limite: number) => espiar((await daTopologia(nome))[0], limite),
  };
}
export type FilasDaTopologia = ReturnType<typeof filasDaTopologia>;
