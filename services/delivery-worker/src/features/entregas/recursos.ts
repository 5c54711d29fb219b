import type { Broker } from '@hub/broker';
import type { DeliveryTopology } from '@hub/contracts';
import type { Logger } from '@hub/log';
import type { Metricas } from '../../metricas';
import type { Relogio } from '../../relogio';
import type { EntregasRepository } from './entregas.repository';

/** The settings the stages of a delivery read (from DELIVERY_* and the consumer's retry policy). */
export interface ConfigDasEntregas {
  /** DELIVERY_RETRY_DELAYS: the delay queues' steps. */
  passosMs: readonly number[];
  /** How long a job may wait in memory for its destination's turn before it is deferred. */
  esperaPorDestinoMs: number;
  /**
   * Least milliseconds between the starts of two record statements (DELIVERY_RECORD_SPACING; GroupCommit's
   * `espacamento`). A record comes after the POST: waiting delays only the job's ack, and an ordered
   * delivery's record, which the next event of its entity waits for, goes at once.
   */
  espacamentoDosRegistrosMs?: number;
  /** The consumer's retry policy's attempts: a job that fails its last one is dead-lettered by the broker. */
  tentativasDoConsumidor: number;
  /** The address of GET /esquema/{nome}/{versao} at the gateway: a CloudEvents body's dataschema. */
  urlDoEsquema: (nome: string, versao: number) => string;
}

/**
 * What every stage of a delivery shares, handed to each as one object (as trigger.dev's run engine
 * hands its systems one `SystemResources`): a stage owns its rules and its batches, never a
 * connection of its own. The stages it calls are passed beside it, by name.
 */
export interface Recursos {
  config: ConfigDasEntregas;
  repo: EntregasRepository;
  broker: Pick<Broker, 'publish'>;
  topologia: DeliveryTopology;
  metricas: Metricas;
  relogio: Relogio;
  logger: Logger;
}

/** Each batch's size, by what it writes (hub_group_commit_items). */
export const medida = (recursos: Recursos, escrita: string) => (itens: number) =>
  recursos.metricas.itensPorEscrita.observe({ escrita }, itens);
