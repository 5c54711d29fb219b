import type { Broker, Consumption, MessageHandler, RetryPolicy } from '@hub/broker';
import {
  type DeliveryTopology,
  declareDestinationQueue,
  destinationRoutingKey,
  trabalhoDeEntrega,
} from '@hub/contracts';
import type { DbClient } from '@hub/hub-data';
import { type PeriodicJob, periodicJob } from '@hub/jobs';
import { createRepeatLimiter, type Logger } from '@hub/log';
import type { Metricas } from '../../metricas';
import { type Destinos, prefetchDoDestino, retido } from './destinos';

/** Where an isolated destination is in its life (migration 015). */
type Estado = 'isolada' | 'saindo' | 'removendo';
export type Motivo = 'retida' | 'acumulo';

/** An isolated destination as this process last read it. */
interface Isolada {
  id: string;
  origem: string;
  estado: Estado;
  /** saindo for longer than the grace: nobody consumes its queue any more */
  parada: boolean;
  /** its queue may be removed now (or a removal that stalled may be taken over) */
  removivel: boolean;
  /** isolated for longer than the quiet period: it may start going back */
  assentada: boolean;
}

interface Consumo {
  consumo: Promise<Consumption | undefined>;
  prefetch: number;
}

export interface IsolamentoOptions {
  db: DbClient;
  broker: Broker;
  topologia: DeliveryTopology;
  destinos: Pick<Destinos, 'regras' | 'aoMudar' | 'aoMudarCircuito'>;
  logger: Logger;
  metricas: Metricas;
  /** How often the isolated destinations are read and their queues looked at (DELIVERY_DESTINOS_REFRESH). */
  intervaloMs: number;
  /** Deferrals of one origin within one interval that isolate it (0: never). */
  adiamentosParaIsolar: number;
  /** Depth of the shared work queue from which the origin taking most of it is isolated (0: never). */
  acumuloParaIsolar: number;
  /** How long an isolated destination, not held, keeps its queue empty before it starts going back. */
  quietudeMs: number;
  /** How long a destination going back is still consumed before its consumers stop. */
  carenciaMs: number;
  /**
   * The most destinations with a queue of their own at once (each is a quorum queue and a consumer
   * per worker); past it, a held destination's jobs wait in the delay queues and a backlog stays in
   * the shared queue. A soft bound: two workers isolating at the same instant may pass it by one.
   */
  maximo: number;
  /**
   * After the grace, how long before its queue is removed: every worker has stopped its consumer
   * (two refreshes) and every job it had taken is settled (a claim's lease).
   */
  margemMs: number;
  /** The handler of jobs taken from a destination's queue. */
  processar: MessageHandler;
  /** The consumer's retries (as the shared queue's); a failed job comes back through the shared queue. */
  retry: RetryPolicy;
  isUnavailable: (error: unknown) => boolean;
}

/**
 * Fair scheduling across destinations (architecture §5): a destination held back (paused, circuit
 * open) or backlogged gets a queue of its own, so its jobs wait there and not in front of everybody
 * else's in the shared work queue. This process's part:
 * - it isolates an origin when one of its jobs meets it held (`reter`), when its jobs keep being
 *   deferred at its concurrency limit, or when it takes most of a deep shared queue: the row first
 *   (`isolada`), then the queue (a job sent before the queue exists is returned and goes to the
 *   shared queue);
 * - it consumes every isolated queue with a prefetch of the destination's share, and not at all
 *   while the destination is held, so a held backlog sits still: no attempts, no churn;
 * - it tells the consumer of the shared queue where a job of an isolated destination goes (`rotaDe`);
 * - it takes a destination back once it is not held and its queue stayed empty for the quiet
 *   period: `saindo` (nothing new is routed there, its queue is still consumed for the grace), then
 *   one worker takes the removal (`removendo`): it unbinds the queue (anything sent there after is
 *   returned to its mandatory publisher, who uses the shared queue), moves what is left to the
 *   shared queue, deletes it, and the row says shared again.
 * Every transition is one conditional UPDATE, so any number of workers can try it and one does it.
 */
export class Isolamento {
  private isoladas = new Map<string, Isolada>();
  private readonly consumos = new Map<string, Consumo>();
  /** The adjustment of each queue's consumer under way, by queue id: one at a time, in order. */
  private readonly ajustes = new Map<string, Promise<void>>();
  private adiamentos = new Map<string, number>();
  private trabalhos = new Map<string, number>();
  private readonly vaziaDesde = new Map<string, number>();
  private readonly isolando = new Map<string, Promise<string | undefined>>();
  private readonly passes: PeriodicJob<void>;
  private readonly ouvintes: ((origem: string) => void)[] = [];
  private parado = false;

  constructor(private readonly o: IsolamentoOptions) {
    this.passes = periodicJob({
      name: 'isolation',
      logger: o.logger,
      everyMs: o.intervaloMs,
      run: () => this.passar(),
    });
    // A destination's consumer follows its rules as soon as this process knows them, not at the next
    // pass: held, it stops taking jobs; its circuit half-open or closed again, it takes them one at
    // a time or at its share. Transitions this process makes come at once; those of other workers
    // (and the end of an open period, or of a probe's lease) with each refresh of the rules.
    o.destinos.aoMudarCircuito((origem) => this.reajustar(origem));
    o.destinos.aoMudar(() => {
      for (const origem of this.isoladas.keys()) this.reajustar(origem);
    });
  }

  async iniciar(): Promise<void> {
    await this.passes.runNow();
    this.passes.start();
  }

  /**
   * No more passes and no new consumer. The consumers of destination queues are cancelled by the
   * broker's close with the shared queue's, all at once: cancelling them first would leave the
   * shared queue's consumer handing every job it gets straight back (the worker is stopping) for as
   * long as their handlers take, each return counting against the job's delivery limit.
   */
  async parar(): Promise<void> {
    this.parado = true;
    await this.passes.stop();
  }

  /** The routing key that takes a job of this origin to its queue, while its jobs go there. */
  rotaDe(origem: string): string | undefined {
    const isolada = this.isoladas.get(origem);
    return isolada?.estado === 'isolada' ? destinationRoutingKey(isolada.id) : undefined;
  }

  /**
   * `ouvinte` is told of every origin whose jobs go to its own queue from now on (isolated here, or
   * read isolated by another worker): its jobs waiting in this process for a turn can leave for it.
   */
  aoIsolar(ouvinte: (origem: string) => void): void {
    this.ouvintes.push(ouvinte);
  }

  /**
   * A job of this origin was deferred at its limit. At the threshold it is isolated now, not at the
   * next pass: until then every job of it taken from the shared queue waits its whole turn in the
   * prefetch, which the healthy destinations' jobs behind it in the queue wait for.
   */
  anotarAdiamento(origem: string): void {
    const n = (this.adiamentos.get(origem) ?? 0) + 1;
    this.adiamentos.set(origem, n);
    if (n === this.o.adiamentosParaIsolar && !this.parado && !this.rotaDe(origem)) void this.isolar(origem, 'acumulo');
  }

  /** A job of this origin was taken from the shared queue (its share of the queue). */
  anotarTrabalho(origem: string): void {
    this.trabalhos.set(origem, (this.trabalhos.get(origem) ?? 0) + 1);
  }

  /**
   * The origin is held: isolated now if it can be (its row first, then its queue). Gives the routing
   * key of its queue, or nothing when its jobs cannot go there now (its queue is being removed, or
   * the database did not answer): they take the pause's way through a delay queue instead.
   */
  reter(origem: string): Promise<string | undefined> {
    return this.isolar(origem, 'retida');
  }

  /** Isolates an origin (see `reter`); one attempt at a time per origin in this process. */
  isolar(origem: string, motivo: Motivo): Promise<string | undefined> {
    const rota = this.rotaDe(origem);
    if (rota) return Promise.resolve(rota);
    let emCurso = this.isolando.get(origem);
    if (!emCurso) {
      emCurso = this.tentarIsolar(origem, motivo)
        .catch((error) => {
          this.o.logger.warn({ err: error, origem }, 'destination not isolated; its jobs stay in the shared queue');
          return undefined;
        })
        .finally(() => this.isolando.delete(origem));
      this.isolando.set(origem, emCurso);
    }
    return emCurso;
  }

  /** One warning per origin every 10 s while the maximum keeps it in the shared queue. */
  private readonly avisoDoMaximo = createRepeatLimiter();

  private async tentarIsolar(origem: string, motivo: Motivo): Promise<string | undefined> {
    // The row locked first: a worker isolating it at the same time is waited for and its change is
    // what `alvo` reads (a plain read would see the row as the statement began, not isolated, and
    // this job would take the delay queue's way for nothing).
    const [linha] = await this.o.db.$queryRaw<{ id: string; isolamento: Estado | null; mudou: boolean }[]>`
      with alvo as (select id, isolamento, isolamento_desde from destino where origem = ${origem} for update),
      mudada as (
        update destino d
           set isolamento = 'isolada', isolamento_desde = now(), isolamento_motivo = ${motivo}
          from alvo
         where d.id = alvo.id
           and (alvo.isolamento is not null
                or (select count(*) from destino where isolamento is not null) < ${this.o.maximo})
           and (alvo.isolamento is null
                -- going back but still consumed: it comes back at once
                or (alvo.isolamento = 'saindo' and alvo.isolamento_desde >= now() - ${this.o.carenciaMs} * interval '1 millisecond'))
        returning d.id)
      select alvo.id::text, case when m.id is null then alvo.isolamento else 'isolada' end as isolamento, m.id is not null as mudou
        from alvo left join mudada m on m.id = alvo.id`;
    // No row yet (its first job: the row is being created), its queue is being removed, or as many
    // destinations as DELIVERY_ISOLATION_MAX have one already.
    if (linha?.isolamento !== 'isolada') {
      if (linha && linha.isolamento === null)
        this.avisoDoMaximo(origem, (omitidos) =>
          this.o.logger.warn(
            { origem, maximo: this.o.maximo, omitidos },
            'destination not isolated: as many destinations as DELIVERY_ISOLATION_MAX have a queue of their own',
          ),
        );
      return undefined;
    }
    // The row first: a job sent to the queue before it is declared is returned and goes to the shared queue.
    await this.o.broker.withChannel((ch) => declareDestinationQueue(ch, linha.id, this.o.topologia));
    this.isoladas.set(origem, {
      id: linha.id,
      origem,
      estado: 'isolada',
      parada: false,
      removivel: false,
      assentada: false,
    });
    if (linha.mudou) {
      this.o.metricas.isolamentos.inc({ mudanca: 'isolada' });
      this.o.logger.info(
        { origem, destino_id: linha.id, motivo, fila: this.o.topologia.filaDoDestino(linha.id) },
        'destination isolated: its jobs wait in a queue of their own',
      );
    }
    // Not waited for: called from within a job of this queue (held on its way back), the cancel of
    // its consumer would wait for that job.
    void this.ajustarConsumo(this.isoladas.get(origem)!);
    this.avisarIsolada(origem);
    return destinationRoutingKey(linha.id);
  }

  private avisarIsolada(origem: string): void {
    for (const ouvinte of this.ouvintes) ouvinte(origem);
  }

  /** One pass (the periodic job never runs two at once). */
  private async passar(): Promise<void> {
    if (this.parado) return;
    try {
      await this.ler();
      await this.isolarAcumulados();
      for (const isolada of this.isoladas.values()) await this.cuidar(isolada);
      for (const id of this.consumos.keys())
        if (![...this.isoladas.values()].some((i) => i.id === id)) await this.emOrdem(id, () => this.naoConsumir(id));
      this.o.metricas.isoladas.set(this.isoladas.size);
    } catch (error) {
      this.o.logger.warn({ err: error }, 'isolated destinations not looked at; trying again at the next pass');
    } finally {
      this.adiamentos = new Map();
      this.trabalhos = new Map();
    }
  }

  private async ler(): Promise<void> {
    const { carenciaMs, margemMs, quietudeMs } = this.o;
    const linhas = await this.o.db.$queryRaw<Isolada[]>`
      select id::text, origem, isolamento as estado,
             isolamento = 'saindo' and isolamento_desde < now() - ${carenciaMs} * interval '1 millisecond' as parada,
             (isolamento = 'saindo' and isolamento_desde < now() - ${carenciaMs + margemMs} * interval '1 millisecond')
               or (isolamento = 'removendo' and isolamento_desde < now() - ${margemMs} * interval '1 millisecond') as removivel,
             isolamento_desde < now() - ${quietudeMs} * interval '1 millisecond' as assentada
        from destino where isolamento is not null`;
    const antes = this.isoladas;
    // A destination another worker has just isolated: its queue may not be declared yet (the row
    // comes first), and a job sent there now would be returned and take the delay queue's way. It
    // is declared here (as it would be) before its jobs are routed to it.
    for (const l of linhas)
      if (l.estado === 'isolada' && antes.get(l.origem)?.id !== l.id)
        await this.o.broker.withChannel((ch) => declareDestinationQueue(ch, l.id, this.o.topologia));
    this.isoladas = new Map(linhas.map((l) => [l.origem, l]));
    for (const l of linhas)
      if (l.estado === 'isolada' && antes.get(l.origem)?.estado !== 'isolada') this.avisarIsolada(l.origem);
    // A queue removed (here or by another worker) is not checked again: its inspection channel goes.
    for (const [origem, isolada] of antes)
      if (!this.isoladas.has(origem)) this.o.broker.forgetQueue(this.o.topologia.filaDoDestino(isolada.id));
  }

  /** Origins whose jobs kept being deferred, or that take most of a deep shared queue, get a queue of their own. */
  private async isolarAcumulados(): Promise<void> {
    const { adiamentosParaIsolar, acumuloParaIsolar } = this.o;
    const alvos = new Set<string>();
    if (adiamentosParaIsolar > 0)
      for (const [origem, n] of this.adiamentos) if (n >= adiamentosParaIsolar) alvos.add(origem);
    if (acumuloParaIsolar > 0 && this.trabalhos.size >= 2) {
      const total = [...this.trabalhos.values()].reduce((a, b) => a + b, 0);
      const [maior, n] = [...this.trabalhos].reduce((a, b) => (b[1] > a[1] ? b : a));
      if (n * 2 >= total) {
        const { messageCount } = await this.o.broker.checkQueue(this.o.topologia.filaDeEntregas);
        if (messageCount >= acumuloParaIsolar) alvos.add(maior);
      }
    }
    for (const origem of alvos) if (!this.rotaDe(origem)) await this.isolar(origem, 'acumulo');
  }

  /** One isolated destination at a pass: its consumer, and whether it starts going back or its queue is removed. */
  private async cuidar(isolada: Isolada): Promise<void> {
    const { id, origem } = isolada;
    const retida = retido(this.o.destinos.regras(origem));
    const adiada = (this.adiamentos.get(origem) ?? 0) > 0;
    if (isolada.estado === 'saindo' && !isolada.parada && (retida || adiada)) {
      // Held or backlogged again before its consumers stopped: it stays.
      await this.isolar(origem, retida ? 'retida' : 'acumulo');
      return;
    }
    if (isolada.estado !== 'isolada') {
      await this.ajustarConsumo(isolada);
      if (isolada.removivel) await this.remover(isolada);
      return;
    }
    // Its queue first (declared again when missing), so that its consumer can start in this pass.
    const mensagens = await this.profundidade(isolada);
    await this.ajustarConsumo(isolada);
    if (retida || adiada || mensagens !== 0) {
      this.vaziaDesde.delete(id);
      return;
    }
    await this.talvezSair(isolada);
  }

  /**
   * Jobs ready in an isolated destination's queue; when the queue is missing (deleted by hand, or its
   * worker died between the row and the declaration) it is declared again and nothing is answered
   * (jobs sent there meanwhile were returned to their publishers and went to the shared queue).
   */
  private async profundidade(isolada: Isolada): Promise<number | undefined> {
    const fila = this.o.topologia.filaDoDestino(isolada.id);
    try {
      return (await this.o.broker.checkQueue(fila)).messageCount;
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
      this.o.logger.warn({ fila }, 'the queue of an isolated destination was missing: declared again');
      await this.o.broker.withChannel((ch) => declareDestinationQueue(ch, isolada.id, this.o.topologia));
      return undefined;
    }
  }

  /**
   * Adjusts an isolated origin's consumer to its rules now, without waiting: called from within a
   * job (the probe's result), which the cancel of its own consumer would wait for.
   */
  private reajustar(origem: string): void {
    const isolada = this.isoladas.get(origem);
    if (isolada && !this.parado) void this.ajustarConsumo(isolada);
  }

  /**
   * Consumes the destination's queue with its share as prefetch, or not at all (held, or on its way
   * back). The adjustments of one queue run one after the other (a cancel waits for the jobs under
   * way, and two adjustments interleaved would leave a consumer nobody cancels); each reads the
   * rules when its turn comes. Stopping, it changes nothing: the broker's close cancels them all.
   */
  private ajustarConsumo(isolada: Isolada): Promise<void> {
    return this.emOrdem(isolada.id, () => this.ajustarAgora(isolada.origem, isolada.id));
  }

  /** Runs `passo` on a queue's consumer after the steps asked for before it; it never fails. */
  private emOrdem(id: string, passo: () => Promise<void>): Promise<void> {
    const ajuste = (this.ajustes.get(id) ?? Promise.resolve())
      .then(passo)
      .catch((error) =>
        this.o.logger.warn(
          { err: error, destino_id: id },
          'destination queue consumer not adjusted; trying again at the next pass',
        ),
      )
      .finally(() => {
        if (this.ajustes.get(id) === ajuste) this.ajustes.delete(id);
      });
    this.ajustes.set(id, ajuste);
    return ajuste;
  }

  private async ajustarAgora(origem: string, id: string): Promise<void> {
    if (this.parado) return;
    // The row as last read when its turn comes: gone (its queue removed), nothing consumes it.
    const isolada = this.isoladas.get(origem);
    if (isolada?.id !== id) return this.naoConsumir(id);
    const regras = this.o.destinos.regras(isolada.origem);
    const consumir =
      !retido(regras) && (isolada.estado === 'isolada' || (isolada.estado === 'saindo' && !isolada.parada));
    const atual = this.consumos.get(isolada.id);
    if (!consumir) {
      if (atual) await this.naoConsumir(isolada.id);
      return;
    }
    const prefetch = prefetchDoDestino(regras);
    if (atual?.prefetch === prefetch) return;
    // A prefetch is fixed for a consumer's life: a new share means a new consumer.
    if (atual) await this.naoConsumir(isolada.id);
    const fila = this.o.topologia.filaDoDestino(isolada.id);
    const consumo = this.o.broker
      .consume(fila, this.o.processar, {
        prefetch,
        retry: this.o.retry,
        isUnavailable: this.o.isUnavailable,
        retryQueue: this.o.topologia.filaDeEntregas,
      })
      .catch((error) => {
        // Its queue missing while the row says isolated (deleted by hand): declared again at the next pass.
        this.o.logger.warn({ err: error, fila }, 'destination queue not consumed; trying again at the next pass');
        if (this.consumos.get(isolada.id)?.consumo === consumo) this.consumos.delete(isolada.id);
        return undefined;
      });
    this.consumos.set(isolada.id, { consumo, prefetch });
    await consumo;
  }

  private async naoConsumir(id: string): Promise<void> {
    const atual = this.consumos.get(id);
    if (!atual) return;
    this.consumos.delete(id);
    await (await atual.consumo)?.cancel();
  }

  /** Not held and its queue empty (now) for the quiet period: it starts going back to the shared queue. */
  private async talvezSair(isolada: Isolada): Promise<void> {
    const fila = this.o.topologia.filaDoDestino(isolada.id);
    const desde = this.vaziaDesde.get(isolada.id) ?? Date.now();
    this.vaziaDesde.set(isolada.id, desde);
    if (!isolada.assentada || Date.now() - desde < this.o.quietudeMs) return;
    const mudadas = await this.o.db.$executeRaw`
      update destino set isolamento = 'saindo', isolamento_desde = now()
       where id = ${isolada.id}::uuid and isolamento = 'isolada'
         and isolamento_desde < now() - ${this.o.quietudeMs} * interval '1 millisecond'`;
    this.vaziaDesde.delete(isolada.id);
    if (mudadas === 0) return;
    isolada.estado = 'saindo';
    this.o.metricas.isolamentos.inc({ mudanca: 'saindo' });
    this.o.logger.info(
      { origem: isolada.origem, destino_id: isolada.id, fila },
      'destination going back to the shared queue: nothing new is sent to its own queue',
    );
  }

  /**
   * Removes the queue of a destination on its way back, once no worker consumes it: one worker takes
   * the removal (the row `removendo`), unbinds the queue, moves what is left in it to the shared
   * queue (each job published with a confirm, then acked), deletes it, and the row says shared.
   * A removal that stalled (its worker died) is taken over after the margin.
   */
  private async remover(isolada: Isolada): Promise<void> {
    const { topologia, broker, db, logger } = this.o;
    const fila = topologia.filaDoDestino(isolada.id);
    const consumidores = await broker
      .checkQueue(fila)
      .then((q) => q.consumerCount)
      .catch((error) => {
        if ((error as { code?: number }).code === 404) return 0;
        throw error;
      });
    if (consumidores > 0) {
      logger.debug({ fila, consumidores }, 'destination queue still consumed: removed later');
      return;
    }
    const tomadas = await db.$executeRaw`
      update destino set isolamento = 'removendo', isolamento_desde = now()
       where id = ${isolada.id}::uuid
         and ((isolamento = 'saindo' and isolamento_desde < now() - ${this.o.carenciaMs + this.o.margemMs} * interval '1 millisecond')
              or (isolamento = 'removendo' and isolamento_desde < now() - ${this.o.margemMs} * interval '1 millisecond'))`;
    if (tomadas === 0) return;
    // Unbound first: from now on a job sent there is returned to its publisher, who uses the shared
    // queue. (Unbinding a queue that is gone closes the channel with a 404: nothing to unbind.)
    await broker
      .withChannel((ch) => ch.unbindQueue(fila, topologia.entregas, destinationRoutingKey(isolada.id)))
      .catch((error) => {
        if ((error as { code?: number }).code !== 404) throw error;
      });
    const movidas = await this.esvaziar(fila);
    await broker.withChannel((ch) => ch.deleteQueue(fila));
    broker.forgetQueue(fila);
    await db.$executeRaw`
      update destino set isolamento = null, isolamento_desde = now(), isolamento_motivo = null
       where id = ${isolada.id}::uuid and isolamento = 'removendo'`;
    this.isoladas.delete(isolada.origem);
    this.o.metricas.isolamentos.inc({ mudanca: 'removida' });
    logger.info(
      { origem: isolada.origem, destino_id: isolada.id, fila, movidas },
      'destination back in the shared queue: its own queue removed',
    );
  }

  /** Moves every job left in a queue to the shared work queue (confirmed, then acked); gives how many. */
  private esvaziar(fila: string): Promise<number> {
    const { broker, topologia } = this.o;
    return broker.withChannel(async (ch) => {
      let n = 0;
      for (;;) {
        const mensagem = await ch.get(fila, { noAck: false }).catch((error) => {
          if ((error as { code?: number }).code === 404) return false as const;
          throw error;
        });
        if (!mensagem) return n;
        await broker.publish(topologia.entregas, trabalhoDeEntrega.routingKey, mensagem.content, {
          ...propriedadesDoTrabalho(mensagem.properties),
          mandatory: true,
        });
        ch.ack(mensagem);
        n += 1;
      }
    });
  }
}

/**
 * The properties a job keeps when it moves between queues: its message id, content type and its
 * own headers (the claim, the consumer's attempt), without RabbitMQ's dead-lettering history (read
 * to detect cycles, it would drop a job that went round the same queues twice) or the publish tag
 * of its last mandatory publish.
 */
export function propriedadesDoTrabalho(
  properties: { messageId?: unknown; contentType?: unknown; headers?: Record<string, unknown> },
  semCabecalhos: readonly string[] = [],
) {
  const headers = Object.fromEntries(
    Object.entries(properties.headers ?? {}).filter(
      ([key]) => !/^x-(death|first-death-|last-death-|delivery-count)/.test(key) && !semCabecalhos.includes(key),
    ),
  );
  return {
    ...(typeof properties.messageId === 'string' ? { messageId: properties.messageId } : {}),
    contentType: typeof properties.contentType === 'string' ? properties.contentType : 'application/json',
    headers,
  };
}
