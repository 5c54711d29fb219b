import type { Broker } from '@hub/broker';
import { delayQueueName, QUEUES } from '@hub/contracts';
import { AppError, notFound } from '@hub/http';
import type { Db } from '../../db';
import { espiarFilaDeErro } from './espiar';
import type { Fila, Papel } from './fila.schemas';
import type { TravaDaFilaDeErro } from './trava';

export interface FilasDeps {
  broker: Broker;
  db: Db;
  /** The readers' locks of the error queue (shared with the reconciliation). */
  trava: TravaDaFilaDeErro;
  /** DELIVERY_RETRY_DELAYS: one delay queue per distinct step. */
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
 * The queues of the delivery topology (architecture §4, Fila): the work queue, one delay queue per step
 * of DELIVERY_RETRY_DELAYS (the workers' setting, read by hub-api too) and the error queue, with
 * their depth and consumers as RabbitMQ reports them now.
 */
export function filasDaTopologia({ broker, db, trava, passosMs }: FilasDeps) {
  const nomes: [string, Papel][] = [
    [QUEUES.entregas, 'trabalho'],
    ...[...new Set(passosMs)].map((ms): [string, Papel] => [delayQueueName(ms), 'atraso']),
    [QUEUES.entregasErro, 'erro'],
  ];

  async function ler(nome: string, papel: Papel): Promise<Fila> {
    // Asked while RabbitMQ is away, the broker would wait for its reconnection: GET /fila and every
    // scrape of /metrics hung for the whole outage (docs/benchmarks.md, "Operator drill").
    if (!broker.connected) throw brokerIndisponivel();
    try {
      const { messageCount, consumerCount } = await broker.checkQueue(nome);
      return { nome, papel, mensagens: messageCount, consumidores: consumerCount, declarada: true };
    } catch (error) {
      // 404 NOT_FOUND closes that channel only; the queue is simply not there yet.
      if ((error as { code?: number }).code !== 404) throw error;
      return { nome, papel, mensagens: 0, consumidores: 0, declarada: false };
    }
  }

  const daTopologia = (nome: string) => {
    const achada = nomes.find(([n]) => n === nome);
    if (!achada) throw notFound('queue of the delivery topology');
    return achada;
  };
  const espiar = espiarFilaDeErro({ db, broker, trava });

  return {
    listar: () => Promise.all(nomes.map(([nome, papel]) => ler(nome, papel))),
    buscar: (nome: string): Promise<Fila> => ler(...daTopologia(nome)),
    /** Up to `limite` messages of the error queue, left in it (404 outside the topology, 409 for the other queues). */
    espiar: (nome: string, limite: number) => espiar(daTopologia(nome)[0], limite),
  };
}
export type FilasDaTopologia = ReturnType<typeof filasDaTopologia>;
