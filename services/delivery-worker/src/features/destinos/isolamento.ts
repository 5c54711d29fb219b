import type { Broker, MessageHandler, RetryPolicy } from '@hub/broker';
import { type DeliveryTopology, declareDestinationQueue, destinationRoutingKey } from '@hub/contracts';
import type { DbClient } from '@hub/hub-data';
import { type PeriodicJob, periodicJob } from '@hub/jobs';
import { createRepeatLimiter, type Logger } from '@hub/log';
import type { Metricas } from '../../metricas';
import { type Relogio, relogioDoSistema } from '../../relogio';
import { Acumulo, type LimiaresDoAcumulo } from './acumulo';
import { ConsumosDosDestinos } from './consumos';
import { type Destinos, retido } from './destinos';
import {
  type Isolada,
  type IsolamentoRepository,
  isolamentoRepository,
  type Motivo,
  type PrazosDoIsolamento,
} from './isolamento.repository';
import { RetornoAoCompartilhado } from './retorno';

export type { Motivo } from './isolamento.repository';

export interface IsolamentoOptions extends LimiaresDoAcumulo, PrazosDoIsolamento {
  db: DbClient;
  broker: Broker;
  topologia: DeliveryTopology;
  destinos: Pick<Destinos, 'regras' | 'aoMudar' | 'aoMudarCircuito'>;
  logger: Logger;
  metricas: Metricas;
  /** How often the isolated destinations are read and their queues looked at (DELIVERY_DESTINOS_REFRESH). */
  intervaloMs: number;
  /** The handler of jobs taken from a destination's queue. */
  processar: MessageHandler;
  /** The consumer's retries (as the shared queue's); a failed job comes back through the shared queue. */
  retry: RetryPolicy;
  isUnavailable: (error: unknown) => boolean;
  /** Date.now unless given (unit tests). */
  relogio?: Pick<Relogio, 'agora'>;
  /** The statements on destino.isolamento; made from `db` unless given (unit tests). */
  repo?: IsolamentoRepository;
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
 *   while the destination is held, so a held backlog sits still: no attempts, no churn
 *   (`ConsumosDosDestinos`);
 * - it tells the consumer of the shared queue where a job of an isolated destination goes (`rotaDe`);
 * - it takes a destination back once it is not held and its queue stayed empty for the quiet
 *   period: `saindo` (nothing new is routed there, its queue is still consumed for the grace), then
 *   one worker takes the removal (`removendo`): it unbinds the queue (anything sent there after is
 *   returned to its mandatory publisher, who uses the shared queue), moves what is left to the
 *   shared queue, deletes it, and the row says shared again (`RetornoAoCompartilhado`).
 * Every transition is one conditional UPDATE, so any number of workers can try it and one does it.
 */
export class Isolamento {
  private isoladas = new Map<string, Isolada>();
  private readonly isolando = new Map<string, Promise<string | undefined>>();
  private readonly passes: PeriodicJob<void>;
  private readonly ouvintes: ((origem: string) => void)[] = [];
  private parado = false;
  private readonly repo: IsolamentoRepository;
  private readonly consumos: ConsumosDosDestinos;
  private readonly retorno: RetornoAoCompartilhado;
  private readonly acumulo: Acumulo;
  /** One warning per origin every 10 s while the maximum keeps it in the shared queue. */
  private readonly avisoDoMaximo = createRepeatLimiter();

  constructor(private readonly o: IsolamentoOptions) {
    this.repo = o.repo ?? isolamentoRepository(o.db, o);
    this.acumulo = new Acumulo({
      ...o,
      profundidade: async () => (await o.broker.checkQueue(o.topologia.filaDeEntregas)).messageCount,
    });
    this.consumos = new ConsumosDosDestinos({
      ...o,
      isolada: (origem) => this.isoladas.get(origem),
      parado: () => this.parado,
    });
    this.retorno = new RetornoAoCompartilhado({
      ...o,
      repo: this.repo,
      relogio: o.relogio ?? relogioDoSistema,
      aoRemover: (isolada) => this.isoladas.delete(isolada.origem),
    });
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
    if (this.acumulo.anotarAdiamento(origem) && !this.parado && !this.rotaDe(origem))
      void this.isolar(origem, 'acumulo');
  }

  /** A job of this origin was taken from the shared queue (its share of the queue). */
  anotarTrabalho(origem: string): void {
    this.acumulo.anotarTrabalho(origem);
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

  private async tentarIsolar(origem: string, motivo: Motivo): Promise<string | undefined> {
    const linha = await this.repo.isolar(origem, motivo);
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
    await this.declarar(linha.id);
    const isolada: Isolada = {
      id: linha.id,
      origem,
      estado: 'isolada',
      parada: false,
      removivel: false,
      assentada: false,
    };
    this.isoladas.set(origem, isolada);
    if (linha.mudou) {
      this.o.metricas.isolamentos.inc({ mudanca: 'isolada' });
      this.o.logger.info(
        { origem, destino_id: linha.id, motivo, fila: this.o.topologia.filaDoDestino(linha.id) },
        'destination isolated: its jobs wait in a queue of their own',
      );
    }
    // Not waited for: called from within a job of this queue (held on its way back), the cancel of
    // its consumer would wait for that job.
    void this.consumos.ajustar(isolada);
    this.avisarIsolada(origem);
    return destinationRoutingKey(linha.id);
  }

  private declarar(id: string): Promise<void> {
    return this.o.broker.withChannel((ch) => declareDestinationQueue(ch, id, this.o.topologia));
  }

  private avisarIsolada(origem: string): void {
    for (const ouvinte of this.ouvintes) ouvinte(origem);
  }

  /** One pass (the periodic job never runs two at once). */
  private async passar(): Promise<void> {
    if (this.parado) return;
    try {
      await this.ler();
      for (const origem of await this.acumulo.alvos()) if (!this.rotaDe(origem)) await this.isolar(origem, 'acumulo');
      for (const isolada of this.isoladas.values()) await this.cuidar(isolada);
      await this.consumos.esquecerOutras((id) => [...this.isoladas.values()].some((i) => i.id === id));
      this.o.metricas.isoladas.set(this.isoladas.size);
    } catch (error) {
      this.o.logger.warn({ err: error }, 'isolated destinations not looked at; trying again at the next pass');
    } finally {
      this.acumulo.recomecar();
    }
  }

  private async ler(): Promise<void> {
    const linhas = await this.repo.ler();
    const antes = this.isoladas;
    // A destination another worker has just isolated: its queue may not be declared yet (the row
    // comes first), and a job sent there now would be returned and take the delay queue's way. It
    // is declared here (as it would be) before its jobs are routed to it.
    for (const l of linhas) if (l.estado === 'isolada' && antes.get(l.origem)?.id !== l.id) await this.declarar(l.id);
    this.isoladas = new Map(linhas.map((l) => [l.origem, l]));
    for (const l of linhas)
      if (l.estado === 'isolada' && antes.get(l.origem)?.estado !== 'isolada') this.avisarIsolada(l.origem);
    // A queue removed (here or by another worker) is not checked again: its inspection channel goes.
    for (const [origem, isolada] of antes)
      if (!this.isoladas.has(origem)) this.o.broker.forgetQueue(this.o.topologia.filaDoDestino(isolada.id));
  }

  /** One isolated destination at a pass: its consumer, and whether it starts going back or its queue is removed. */
  private async cuidar(isolada: Isolada): Promise<void> {
    const retida = retido(this.o.destinos.regras(isolada.origem));
    const adiada = this.acumulo.adiada(isolada.origem);
    if (isolada.estado === 'saindo' && !isolada.parada && (retida || adiada)) {
      // Held or backlogged again before its consumers stopped: it stays.
      await this.isolar(isolada.origem, retida ? 'retida' : 'acumulo');
      return;
    }
    if (isolada.estado !== 'isolada') {
      await this.consumos.ajustar(isolada);
      if (isolada.removivel) await this.retorno.remover(isolada);
      return;
    }
    // Its queue first (declared again when missing), so that its consumer can start in this pass.
    const mensagens = await this.profundidade(isolada);
    await this.consumos.ajustar(isolada);
    if (retida || adiada || mensagens !== 0) {
      this.retorno.ocupada(isolada);
      return;
    }
    await this.retorno.talvezSair(isolada);
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
      await this.declarar(isolada.id);
      return undefined;
    }
  }

  /**
   * Adjusts an isolated origin's consumer to its rules now, without waiting: called from within a
   * job (the probe's result), which the cancel of its own consumer would wait for.
   */
  private reajustar(origem: string): void {
    const isolada = this.isoladas.get(origem);
    if (isolada && !this.parado) void this.consumos.ajustar(isolada);
  }
}
