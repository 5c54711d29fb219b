import { RequeueMessage } from '@hub/broker';

/** Why a job goes back to its queue untouched: no attempt made, nothing counted. */
export type MotivoDaDevolucao = 'parando' | 'cortado';

const TEXTO: Record<MotivoDaDevolucao, string> = {
  parando: 'the worker is stopping',
  cortado: 'the worker stopped during the attempt',
};

/**
 * A stage's refusal to go on with a job because the worker is stopping (`parando`) or cut the
 * POSTs under way at its deadline (`cortado`). A RequeueMessage, so the consumer puts the job back
 * as it is; the failure stage gives its claim back first.
 */
export class TrabalhoDevolvido extends RequeueMessage {
  constructor(readonly motivo: MotivoDaDevolucao) {
    super(TEXTO[motivo]);
  }
}

/** Why a delivery's job is in the error queue (its `hub-motivo` header). */
export type MotivoDaFilaDeErro = 'tentativas_esgotadas' | 'assinatura_encerrada' | 'limite_de_entregas';

/** What became of a job that was not attempted, or of its attempt (the stages' answer, for tests and logs). */
export type Desfecho =
  /** final, unknown, not due or held by another job's claim: dropped */
  | 'descartado'
  /** its subscription is off: the delivery is cancelled */
  | 'cancelado'
  /** a poison job: its delivery and job are in the error queue */
  | 'envenenado'
  /** sent on to its isolated destination's own queue */
  | 'encaminhado'
  /** its destination is held (paused, circuit open): it waits in a delay queue */
  | 'pausado'
  | 'circuito'
  /** its destination stayed at its limit for the whole wait: in the shortest delay queue */
  | 'adiado'
  /** attempted and recorded */
  | 'registrado'
  /** attempted; another attempt had made the delivery final meanwhile */
  | 'ja_final';

/** The outcomes that send a job, untouched, into a delay queue (hub_delivery_jobs_total's desfecho). */
export type DesfechoDaEspera = Extract<Desfecho, 'pausado' | 'circuito' | 'adiado'>;
