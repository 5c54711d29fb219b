import type { Broker } from '@hub/broker';
import { uuidv7 } from '@hub/database';
import type { DbClient } from '@hub/hub-data';
import { type PeriodicJob, periodicJob } from '@hub/jobs';
import type { Logger } from '@hub/log';
import { type Relogio, relogioDoSistema } from '../../relogio';
import type { Circuito, LimiaresDoCircuito } from './circuito';
import { Circuitos } from './circuitos';
import { circuitoRepository, type DestinosRepository, destinosRepository, type Linha } from './destinos.repository';
import { FigurasDosDestinos } from './figuras';

export type { Circuito } from './circuito';

/** What this worker process obeys for one origin now. */
export interface Regras {
  /** POSTs under way at once from this process: its share of the row's concorrencia_maxima. */
  concorrencia: number;
  /** POSTs started per second by this process (its share of limite_por_segundo); null: no limit. */
  porSegundo: number | null;
  pausado: boolean;
  /** The origin's circuit breaker, as the row said at the last refresh (or as this process just changed it). */
  circuito: Circuito;
  /**
   * The circuit is not closed, but one probe may be attempted now: its open period is over, or the
   * lease of the probe under way ran out (its worker died). A job that finds it so tries to take
   * the probe (`Destinos.sondar`); the others wait as before.
   */
  sondaDevida: boolean;
}

/**
 * Whether this destination's jobs must not be attempted now: it is paused, or its circuit is open
 * (or half-open with a probe under way elsewhere). Held jobs are not claimed and spend no attempt of
 * their cycle: they go to the destination's own queue, which is not consumed while it is held (or,
 * when that queue cannot be had, wait in a delay queue), and the sweeper leaves their deliveries
 * alone. The one predicate of "held" the delivery path asks (architecture §5, Destinations).
 */
export function retido(regras: Regras): boolean {
  return regras.pausado || (regras.circuito !== 'fechado' && !regras.sondaDevida);
}

/**
 * How many jobs of an isolated destination's queue this process takes at once: its share of the
 * concurrency (and of the per-second limit), so every job taken gets its turn at once instead of
 * waiting in memory, being deferred and cycling through the delay queues. One while its circuit is
 * not closed: the job taken is the probe, and the rest stay in the queue until it closes.
 */
export function prefetchDoDestino(regras: Regras): number {
  if (regras.circuito !== 'fechado') return 1;
  return Math.max(1, Math.min(regras.concorrencia, regras.porSegundo ?? regras.concorrencia));
}

/** The defaults of a destino row (migrations 008, 016), for an origin met before its row is read. */
const PADRAO: Omit<Linha, 'origem'> = {
  concorrencia_maxima: 10,
  limite_por_segundo: null,
  pausado: false,
  circuito: 'fechado',
  circuito_desde: null,
  circuito_aberto_ate: null,
  circuito_sonda_ate: null,
};

export interface DestinosOptions {
  db: DbClient;
  broker: Pick<Broker, 'checkQueue'>;
  /** The work queue: its consumer count is how many workers share a destination's limits. */
  filaDeEntregas: string;
  logger: Logger;
  /** How often the rows, the number of workers and the figures are exchanged with the database. */
  intervaloMs: number;
  /** The most POSTs one process makes to one origin at once, whatever the row allows (its socket pool). */
  tetoPorProcesso: number;
  /** Told after each pass that read the rows (metrics). */
  aoLer?: () => void;
  /** This process's POSTs under way per origin, written with every pass (GET /destino's em_andamento). */
  emAndamento?: () => [string, number][];
  /** When circuits open and for how long; `sondaMs`: the lease of a probe (its POST, signing and recording). */
  circuito: LimiaresDoCircuito & { sondaMs: number };
  /** Told of each transition of a circuit this process made (metrics). */
  aoMudarCircuito?: (origem: string, para: Circuito) => void;
  /** Date.now unless given (unit tests). */
  relogio?: Pick<Relogio, 'agora'>;
}

/**
 * The destinations' rules as every worker obeys them (architecture §4, Destino): the rows' limits are for
 * all workers together, so each process takes its share (the limit divided by the work queue's
 * consumers, rounded up, at least 1), read again every `intervaloMs`; a PATCH, pausar or retomar is
 * obeyed within about that long. An origin met without a row gets one (the defaults). Each attempt
 * is counted per origin and minute (`FigurasDosDestinos`) and in its circuit's window (`Circuitos`,
 * which opens, probes and closes circuits). With each pass the process also writes its POSTs under
 * way per origin (destino_em_andamento, valid for three passes; its rows are deleted when it stops).
 */
export class Destinos {
  private linhas = new Map<string, Linha>();
  /** The rules of the origins whose circuit is closed, by their row (see `regras`). */
  private readonly regrasGuardadas = new WeakMap<Linha, { workers: number; regras: Regras }>();
  private workers = 1;
  private readonly conhecidas = new Set<string>();
  private readonly refresco: PeriodicJob<void>;
  private readonly ouvintes: (() => void)[] = [];
  /** This process in destino_em_andamento. */
  private readonly processo = uuidv7();
  /** The origins whose last row written said POSTs were under way (a zero is written once after). */
  private comAtivos = new Set<string>();
  private readonly repo: DestinosRepository;
  private readonly relogio: Pick<Relogio, 'agora'>;
  private readonly figuras: FigurasDosDestinos;
  private readonly circuitosDoProcesso: Circuitos;

  constructor(private readonly options: DestinosOptions) {
    this.repo = destinosRepository(options.db);
    this.relogio = options.relogio ?? relogioDoSistema;
    this.figuras = new FigurasDosDestinos(this.repo);
    this.circuitosDoProcesso = new Circuitos(
      {
        repo: circuitoRepository(options.db),
        logger: options.logger,
        relogio: this.relogio,
        limiares: options.circuito,
        aoMudarCircuito: options.aoMudarCircuito,
      },
      {
        linha: (origem) => this.linhas.get(origem),
        mudar: (origem, transicao) =>
          this.linhas.set(origem, { ...(this.linhas.get(origem) ?? { origem, ...PADRAO }), ...transicao }),
        workers: () => this.workers,
      },
    );
    this.refresco = periodicJob({
      name: 'destinations refresh',
      logger: options.logger,
      everyMs: options.intervaloMs,
      run: () => this.passar(),
    });
  }

  /** Reads the rows once, then keeps them fresh. */
  async iniciar(): Promise<void> {
    await this.refresco.runNow();
    this.refresco.start();
  }

  /** Stops refreshing (the pass under way ends first); `gravarRestantes` writes what comes after. */
  async parar(): Promise<void> {
    await this.refresco.stop();
  }

  /** Writes the figures not written yet and takes back its attempts in flight (at stop, once the last attempts are over). */
  async gravarRestantes(): Promise<void> {
    await Promise.all([this.figuras.gravar(), this.repo.esquecerEmAndamento(this.processo)]).catch((error) =>
      this.options.logger.warn({ err: error }, 'destination figures or attempts in flight not written at stop'),
    );
  }

  /** Called after each refresh (limits may have changed: waiting jobs are looked at again). */
  aoMudar(ouvinte: () => void): void {
    this.ouvintes.push(ouvinte);
  }

  /**
   * Called, synchronously, whenever this process's view of an origin's circuit changes between
   * refreshes: a transition it made (opened, probe taken, probe's result) or one another worker made
   * that its statement met (the probe already taken). The listener must not wait for the job whose
   * statement told it: it is called from within that job.
   */
  aoMudarCircuito(ouvinte: (origem: string) => void): void {
    this.circuitosDoProcesso.aoMudar(ouvinte);
  }

  regras(origem: string): Regras {
    const lida = this.linhas.get(origem);
    // A closed circuit's rules depend on its row and the workers only (a row that changes is a new
    // object): kept, as a job asks for them several times (before and after its claim, its turn).
    const guardada = lida?.circuito === 'fechado' ? this.regrasGuardadas.get(lida) : undefined;
    if (guardada && guardada.workers === this.workers) return guardada.regras;
    const linha = lida ?? { origem, ...PADRAO };
    if (!lida && !this.conhecidas.has(origem) && /^https?:\/\//.test(origem)) {
      this.conhecidas.add(origem);
      void this.criar(origem);
    }
    const parte = (total: number) => Math.max(1, Math.ceil(total / this.workers));
    const regras: Regras = Object.freeze({
      concorrencia: Math.min(this.options.tetoPorProcesso, parte(linha.concorrencia_maxima)),
      porSegundo: linha.limite_por_segundo === null ? null : parte(linha.limite_por_segundo),
      pausado: linha.pausado,
      circuito: linha.circuito,
      sondaDevida: this.sondaDevida(linha),
    });
    if (lida?.circuito === 'fechado') this.regrasGuardadas.set(lida, { workers: this.workers, regras });
    return regras;
  }

  /**
   * One attempt: its figures (GET /destino) by `sucesso`; the circuit's window by `saudavel` (the
   * destination answered as a live server does, `destinoFora`), unless it was the probe, whose
   * result `concluirSonda` takes instead.
   */
  anotar(
    origem: string,
    sucesso: boolean,
    duracaoMs: number,
    instante = new Date(),
    sonda = false,
    saudavel = sucesso,
  ): void {
    this.figuras.anotar(origem, sucesso, duracaoMs, instante);
    if (!sonda) this.circuitosDoProcesso.contar(origem, saudavel, instante.getTime());
  }

  /**
   * The origins whose circuit is not closed, and its state (the metrics' gauge): a closed circuit is
   * no series, so the series stay as few as the destinations held now, however many ever opened.
   */
  circuitos(): [string, Circuito][] {
    return [...this.linhas.values()].filter((l) => l.circuito !== 'fechado').map((l) => [l.origem, l.circuito]);
  }

  /** Takes the origin's probe (`Circuitos.sondar`): its token, or null when another job has it. */
  sondar(origem: string): Promise<string | null> {
    return this.circuitosDoProcesso.sondar(origem);
  }

  /** The probe's result (`Circuitos.concluirSonda`). */
  concluirSonda(origem: string, token: string, sucesso: boolean, resultado: string): Promise<void> {
    return this.circuitosDoProcesso.concluirSonda(origem, token, sucesso, resultado);
  }

  /** A probe taken but not attempted (the worker is stopping): its lease ends now, so another job takes it. */
  devolverSonda(origem: string, token: string): Promise<void> {
    return this.circuitosDoProcesso.devolverSonda(origem, token);
  }

  private sondaDevida(linha: Linha): boolean {
    const ate = linha.circuito === 'aberto' ? linha.circuito_aberto_ate : linha.circuito_sonda_ate;
    return linha.circuito !== 'fechado' && (ate === null || ate.getTime() <= this.relogio.agora());
  }

  /** One refresh (the periodic job never runs two at once). */
  private async passar(): Promise<void> {
    try {
      await Promise.all([this.ler(), this.figuras.gravar(), this.gravarEmAndamento()]);
      this.options.aoLer?.();
      for (const ouvinte of this.ouvintes) ouvinte();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'destinations not refreshed; the last rules stay');
    }
  }

  private async ler(): Promise<void> {
    const inicio = this.circuitosDoProcesso.geracao;
    const [linhas, consumidores] = await Promise.all([
      this.repo.lerLinhas(),
      this.options.broker.checkQueue(this.options.filaDeEntregas).then((q) => q.consumerCount),
    ]);
    this.linhas = new Map(linhas.map((l) => [l.origem, l]));
    this.workers = Math.max(1, consumidores);
    this.circuitosDoProcesso.reaplicar(this.linhas, inicio);
  }

  private async criar(origem: string): Promise<void> {
    try {
      await this.repo.criar(origem);
    } catch (error) {
      this.conhecidas.delete(origem); // tried again when next met
      this.options.logger.warn({ err: error, origem }, 'destination row not created');
    }
  }

  /**
   * This process's POSTs under way per origin: the origins with some, and a zero for those that had
   * some at the last write. Rows of processes gone for an hour (killed) are deleted on the way.
   */
  private async gravarEmAndamento(): Promise<void> {
    const agora = new Map((this.options.emAndamento?.() ?? []).filter(([, n]) => n > 0));
    for (const origem of this.comAtivos) if (!agora.has(origem)) agora.set(origem, 0);
    const linhas = [...agora].map(([origem, n]) => ({ origem, n }));
    if (linhas.length === 0) return;
    await this.repo.gravarEmAndamento(this.processo, linhas, 3 * this.options.intervaloMs);
    this.comAtivos = new Set(linhas.filter((l) => l.n > 0).map((l) => l.origem));
  }
}
