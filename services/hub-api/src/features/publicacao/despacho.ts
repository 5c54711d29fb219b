import { type Broker, UnroutableError } from '@hub/broker';
import { type SqlPool, statement } from '@hub/database';
import type { Logger } from '@hub/log';
import { type OutboxMessage, outboxInsert } from '@hub/outbox';
import { publicando, rastreamentoLigado } from '@hub/tracing';

export interface DespachanteOptions {
  /** Absent (a process without RabbitMQ): every job goes to the outbox, for a relay to publish. */
  broker?: Broker;
  sql: SqlPool;
  logger: Logger;
  /** A job the broker has not confirmed within this long goes to the outbox (its copy may still arrive). */
  confirmacaoMs?: number;
  /** Jobs awaiting their confirm at most; beyond, new ones go straight to the outbox. */
  maximoEmVoo?: number;
  /**
   * Another route for a job, as the outbox relay's `rotear`: a job of a destination with a queue of
   * its own goes there (architecture §5, fair scheduling); unroutable there, to its own route.
   */
  rotear?: (mensagem: OutboxMessage) => { exchange: string; routingKey: string } | undefined;
}

/** Jobs started at once before yielding to the event loop: framing hundreds of messages is CPU work. */
const FATIA = 50;

/** The jobs the broker did not confirm, into the outbox (the relay sends them); no rows back. */
export const PARA_A_OUTBOX = statement<object>({
  name: 'publicacao_para_a_outbox',
  text: outboxInsert([]).text,
  parameters: ['uuid[]', 'text[]', 'text[]', 'text[]', 'json[]', 'jsonb[]'],
  columns: {},
});

/**
 * Publication's delivery jobs, published right after the statement that wrote their deliveries has
 * committed (architecture §5; docs/decisions/postgresql-work-per-delivery.md), with confirms,
 * instead of going through the outbox table (an insert, an update and a delete of a ~2 KiB row per
 * delivery: more than half of PostgreSQL's writes per delivery). What was accepted is never lost:
 * - a job the broker does not confirm (RabbitMQ away, a nack, no confirm in time), or one that finds
 *   the process stopping or too many jobs in flight, is written to the outbox, which the relay
 *   publishes as before, so an outage of the broker costs what it always did;
 * - a process that dies between the commit and the confirms leaves deliveries pendente with no job:
 *   the worker's sweeper republishes them (DELIVERY_SWEEP_AGE after proxima_tentativa_em, which is
 *   the event's receipt), each job rebuilt from the database as publication builds it, so with the
 *   same webhook-id (the delivery id) and body.
 * A job published here and also written to the outbox (a confirm later than confirmacaoMs), or swept
 * while still travelling, is a duplicate the worker's claim drops.
 */
export function despachanteDeTrabalhos(options: DespachanteOptions) {
  const { broker, sql, logger } = options;
  const confirmacaoMs = options.confirmacaoMs ?? 10_000;
  const maximoEmVoo = options.maximoEmVoo ?? 20_000;
  const tarefas = new Set<Promise<void>>();
  let emVoo = 0;
  let parado = false;

  function publicar(t: OutboxMessage, prazo: Promise<never>): Promise<void> {
    // When tracing records, each job gets a PRODUCER span, child of its publication's (whose
    // context its headers carry); otherwise the headers go as they are.
    if (rastreamentoLigado())
      return publicando(`publish ${t.exchange}`, t.headers, { 'messaging.message.id': t.messageId }, (headers) =>
        publicarCom(t, headers, prazo),
      );
    return publicarCom(t, t.headers, prazo);
  }

  function publicarCom(t: OutboxMessage, headers: OutboxMessage['headers'], prazo: Promise<never>): Promise<void> {
    const conteudo = Buffer.from(JSON.stringify(t.body));
    const propriedades = { messageId: t.messageId, ...(headers ? { headers } : {}) };
    const propria = () => broker!.publish(t.exchange, t.routingKey, conteudo, propriedades);
    const rota = options.rotear?.(t);
    const publicando = rota
      ? broker!
          .publish(rota.exchange, rota.routingKey, conteudo, { ...propriedades, mandatory: true })
          .catch((error: unknown) => {
            if (!(error instanceof UnroutableError)) throw error;
            return propria();
          })
      : propria();
    return Promise.race([publicando, prazo]);
  }

  /** Publishes every job; gives the ones not confirmed. */
  async function publicarTodos(trabalhos: OutboxMessage[]): Promise<OutboxMessage[]> {
    // One deadline for the batch's jobs (a timer per job was 3 timers per event): a job unconfirmed
    // when it passes goes to the outbox, as before.
    let timer: NodeJS.Timeout | undefined;
    const prazo = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no broker confirm within ${confirmacaoMs} ms`)), confirmacaoMs);
    });
    const publicacoes: Promise<void>[] = [];
    let resultados: PromiseSettledResult<void>[];
    try {
      for (let i = 0; i < trabalhos.length; i += FATIA) {
        if (i > 0) await new Promise((resolve) => setImmediate(resolve));
        for (const t of trabalhos.slice(i, i + FATIA)) publicacoes.push(publicar(t, prazo));
      }
      resultados = await Promise.allSettled(publicacoes);
    } finally {
      clearTimeout(timer);
    }
    const falhas = trabalhos.filter((_, i) => resultados[i]!.status === 'rejected');
    if (falhas.length > 0) {
      const motivo = resultados.find((r): r is PromiseRejectedResult => r.status === 'rejected')!.reason;
      logger.warn({ err: motivo, trabalhos: falhas.length }, 'publication: jobs not confirmed; written to the outbox');
    }
    return falhas;
  }

  async function despachar(trabalhos: OutboxMessage[]): Promise<void> {
    let restantes = trabalhos;
    if (broker?.connected && !parado && emVoo + trabalhos.length <= maximoEmVoo) {
      emVoo += trabalhos.length;
      try {
        restantes = await publicarTodos(trabalhos);
      } finally {
        emVoo -= trabalhos.length;
      }
    }
    if (restantes.length === 0) return;
    await sql.run(PARA_A_OUTBOX, outboxInsert(restantes).values).catch((error) =>
      // The deliveries are committed, pendente: the worker's sweeper sends their jobs.
      logger.error(
        { err: error, trabalhos: restantes.length },
        'publication: jobs neither confirmed nor written to the outbox; the sweeper will send them',
      ),
    );
  }

  return {
    /** Called once the deliveries of these jobs are committed; never throws, never waits. */
    enviar(trabalhos: OutboxMessage[]): void {
      if (trabalhos.length === 0) return;
      const tarefa = despachar(trabalhos);
      tarefas.add(tarefa);
      void tarefa.finally(() => tarefas.delete(tarefa));
    },
    /** Sends what comes next to the outbox, and waits for the jobs under way (confirmed, or in the outbox). */
    async parar(): Promise<void> {
      parado = true;
      await Promise.allSettled([...tarefas]);
    },
  };
}
export type DespachanteDeTrabalhos = ReturnType<typeof despachanteDeTrabalhos>;
