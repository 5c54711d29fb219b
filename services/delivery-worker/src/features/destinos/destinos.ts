import { randomUUID } from 'node:crypto';
import type { Broker } from '@hub/broker';
import { uuidv7 } from '@hub/database';
import type { DbClient } from '@hub/hub-data';
import { type PeriodicJob, periodicJob } from '@hub/jobs';
import type { Logger } from '@hub/log';
import { type Circuito, type Contagem, contagemQueAbre, Janela, type LimiaresDoCircuito } from './circuito';

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

interface Linha {
  origem: string;
  concorrencia_maxima: number;
  limite_por_segundo: number | null;
  pausado: boolean;
  circuito: Circuito;
  circuito_desde: Date | null;
  /** aberto: when a probe may go */
  circuito_aberto_ate: Date | null;
  /** meio_aberto: when the probe's lease ends */
  circuito_sonda_ate: Date | null;
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
/** The columns of a destino row that the workers read (the circuit's as the transitions return them). */
const COLUNAS_DO_CIRCUITO = 'circuito, circuito_desde, circuito_aberto_ate, circuito_sonda_ate';
/** Upper bounds in ms of destino_minuto.duracoes' buckets (the 12th holds everything longer). */
const LIMITES_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];
const MINUTO_MS = 60_000;

interface Figuras {
  tentativas: number;
  falhas: number;
  duracoes: number[];
}

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
}

/** A transition as a statement returns it. */
interface Transicao {
  circuito: Circuito;
  circuito_desde: Date | null;
  circuito_aberto_ate: Date | null;
  circuito_sonda_ate: Date | null;
}

/**
 * The destinations' rules as every worker obeys them (architecture §4, Destino): the rows' limits are for
 * all workers together, so each process takes its share (the limit divided by the work queue's
 * consumers, rounded up, at least 1), read again every `intervaloMs`; a PATCH, pausar or retomar is
 * obeyed within about that long. An origin met without a row gets one (the defaults). Each attempt
 * is counted here per origin and minute and added to destino_minuto at the same pace, so GET
 * /destino shows the last hour's failures and durations; counts that could not be written are kept
 * for the next pass. With each pass the process also writes its POSTs under way per origin
 * (destino_em_andamento, valid for three passes; its rows are deleted when it stops).
 *
 * The circuit breaker (issue 24): each process counts its attempts per origin over a sliding window
 * and opens the origin's circuit in the row (a conditional UPDATE, with a line of history) when its
 * share of the threshold failed; every worker obeys the row within a refresh. Once the open period is
 * over, one job takes the probe's lease (another conditional UPDATE) and its attempt closes the
 * circuit or opens it again for twice as long.
 */
export class Destinos {
  private linhas = new Map<string, Linha>();
  /** The rules of the origins whose circuit is closed, by their row (see `regras`). */
  private readonly regrasGuardadas = new WeakMap<Linha, { workers: number; regras: Regras }>();
  private workers = 1;
  private readonly conhecidas = new Set<string>();
  private pendentes = new Map<string, Map<number, Figuras>>();
  private readonly refresco: PeriodicJob<void>;
  private readonly ouvintes: (() => void)[] = [];
  /** This process in destino_em_andamento. */
  private readonly processo = uuidv7();
  /** The origins whose last row written said POSTs were under way (a zero is written once after). */
  private comAtivos = new Set<string>();
  /** This process's attempts per origin since its circuit last closed, within the window. */
  private readonly janelas = new Map<string, Janela>();
  /** Origins whose circuit this process is opening, or whose probe it is asking for, now. */
  private readonly mudando = new Set<string>();
  /** Transitions this process made, by origin, with a counter: a refresh read before one does not undo it. */
  private readonly aplicadas = new Map<string, { geracao: number; transicao: Transicao }>();
  private geracao = 0;
  /** Told of each circuit transition this process made or met on a statement of its own, by origin. */
  private readonly ouvintesDoCircuito: ((origem: string) => void)[] = [];

  constructor(private readonly options: DestinosOptions) {
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
    await Promise.all([
      this.gravarFiguras(),
      this.options.db.$executeRaw`delete from destino_em_andamento where processo = ${this.processo}::uuid`,
    ]).catch((error) =>
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
    this.ouvintesDoCircuito.push(ouvinte);
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

  private sondaDevida(linha: Linha): boolean {
    const ate = linha.circuito === 'aberto' ? linha.circuito_aberto_ate : linha.circuito_sonda_ate;
    return linha.circuito !== 'fechado' && (ate === null || ate.getTime() <= Date.now());
  }

  /**
   * One attempt to an origin, for its figures and its circuit's window (`sonda`: the attempt was
   * the circuit's probe, whose result `concluirSonda` takes instead).
   */
  /**
   * One attempt: its figures (GET /destino) by `sucesso`; the circuit's window by `saudavel` (the
   * destination answered as a live server does, `destinoFora`), unless it was the probe.
   */
  anotar(
    origem: string,
    sucesso: boolean,
    duracaoMs: number,
    instante = new Date(),
    sonda = false,
    saudavel = sucesso,
  ): void {
    const f = this.figuras(origem, Math.floor(instante.getTime() / MINUTO_MS) * MINUTO_MS);
    f.tentativas += 1;
    if (!sucesso) f.falhas += 1;
    const balde = LIMITES_MS.findIndex((limite) => duracaoMs <= limite);
    f.duracoes[balde === -1 ? 11 : balde]! += 1;
    if (!sonda) this.contarNoCircuito(origem, saudavel, instante.getTime());
  }

  /**
   * The origins whose circuit is not closed, and its state (the metrics' gauge): a closed circuit is
   * no series, so the series stay as few as the destinations held now, however many ever opened.
   */
  circuitos(): [string, Circuito][] {
    return [...this.linhas.values()].filter((l) => l.circuito !== 'fechado').map((l) => [l.origem, l.circuito]);
  }

  /** An attempt in the window of a closed circuit; the circuit opens when the window says so. */
  private contarNoCircuito(origem: string, sucesso: boolean, instanteMs: number): void {
    const limiares = this.options.circuito;
    // An open circuit counts nothing. An origin whose row this process has not read yet (a
    // subscription just created) counts already: the opening finds its row, or opens nothing.
    if (limiares.minimoDeFalhas === 0 || (this.linhas.get(origem)?.circuito ?? 'fechado') !== 'fechado') return;
    let janela = this.janelas.get(origem);
    if (!janela) {
      janela = new Janela(limiares.janelaMs);
      this.janelas.set(origem, janela);
    }
    const agora = Date.now();
    janela.anotar(sucesso, instanteMs, agora);
    // A success never makes the failures more or their share larger: only a failure is looked at.
    if (sucesso || this.mudando.has(origem)) return;
    const abre = contagemQueAbre(janela, agora, limiares, this.workers);
    if (abre) void this.abrir(origem, abre.contagem, abre.duranteMs);
  }

  /**
   * Opens the circuit: only if it is still closed and was not closed again after the oldest attempt
   * counted (by hand, or by another worker's probe), so stale failures never reopen it.
   */
  private async abrir(origem: string, contagem: Contagem, duranteMs: number): Promise<void> {
    const { minimoDeFalhas, parcela, abertoMs, abertoMaximoMs } = this.options.circuito;
    const parte = Math.ceil(minimoDeFalhas / this.workers);
    const detalhe =
      `${contagem.falhas} of ${contagem.tentativas} attempts failed within ${duranteMs / 1000} s at one of ${this.workers} ` +
      `worker(s) (threshold: ${minimoDeFalhas} failures over all workers, ${parte} for each, and at least ` +
      `${Math.round(parcela * 100)} % of the attempts)`;
    this.mudando.add(origem);
    try {
      const [linha] = await this.options.db.$queryRawUnsafe<Transicao[]>(
        `with mudou as (
           update destino d
              set circuito = 'aberto', circuito_desde = now(),
                  circuito_aberturas = d.circuito_aberturas + 1,
                  circuito_aberto_ate = now() + least($5::bigint, $4::bigint * power(2, least(d.circuito_aberturas, 30))::bigint)
                                                * interval '1 millisecond',
                  circuito_sonda = null, circuito_sonda_ate = null
            where d.origem = $1::text and d.circuito = 'fechado'
              and (d.circuito_desde is null or d.circuito_desde <= $6::timestamptz)
           returning d.id, ${COLUNAS_DO_CIRCUITO}
         ),
         historico as (
           insert into destino_circuito (id, destino_id, em, de, para, motivo, detalhe, falhas, tentativas, aberto_ate)
           select $7::uuid, id, circuito_desde, 'fechado', 'aberto', 'falhas', $8::text, $2::int, $3::int, circuito_aberto_ate
             from mudou
         )
         select ${COLUNAS_DO_CIRCUITO} from mudou`,
        origem,
        contagem.falhas,
        contagem.tentativas,
        abertoMs,
        abertoMaximoMs,
        new Date(contagem.desdeMs),
        uuidv7(),
        detalhe,
      );
      // Opened here, or already open / closed since by someone else: this window has served.
      this.janelas.delete(origem);
      if (!linha) return;
      this.aplicar(origem, linha);
      this.options.logger.warn(
        {
          origem,
          falhas: contagem.falhas,
          tentativas: contagem.tentativas,
          janela_ms: duranteMs,
          aberto_ate: linha.circuito_aberto_ate,
        },
        `destination circuit opened: ${detalhe}`,
      );
      this.options.aoMudarCircuito?.(origem, 'aberto');
    } catch (error) {
      this.options.logger.warn({ err: error, origem }, 'destination circuit not opened; the next failure tries again');
    } finally {
      this.mudando.delete(origem);
    }
  }

  /**
   * Takes the origin's probe (half-open): the open period is over, or the probe under way lost its
   * lease. Gives the probe's token, or null when another job (here or in another worker) has it;
   * either way this process's view of the row is brought up to date, so the jobs that come after
   * wait without asking the database again.
   */
  async sondar(origem: string): Promise<string | null> {
    if (this.mudando.has(origem)) return null;
    this.mudando.add(origem);
    const token = randomUUID();
    try {
      const [linha] = await this.options.db.$queryRawUnsafe<(Transicao & { tomada: boolean; de: Circuito })[]>(
        `with antes as (
           select id, circuito, circuito_aberto_ate, circuito_sonda_ate, circuito_desde from destino
            where origem = $1::text for update
         ),
         mudou as (
           update destino d
              set circuito = 'meio_aberto', circuito_desde = now(),
                  circuito_sonda = $2::uuid, circuito_sonda_ate = now() + $3::int * interval '1 millisecond'
             from antes a
            where d.id = a.id and not d.pausado
              and ((a.circuito = 'aberto' and a.circuito_aberto_ate <= now())
                   or (a.circuito = 'meio_aberto' and a.circuito_sonda_ate <= now()))
           returning d.id, d.circuito, d.circuito_desde, d.circuito_aberto_ate, d.circuito_sonda_ate, a.circuito as de
         ),
         historico as (
           insert into destino_circuito (id, destino_id, em, de, para, motivo, detalhe)
           select $4::uuid, id, circuito_desde, de, 'meio_aberto',
                  case de when 'aberto' then 'periodo_encerrado' else 'sonda_expirada' end,
                  case de when 'aberto' then 'the open period is over: one delivery is attempted as the probe'
                          else 'the lease of the probe under way ran out (its worker stopped or died): another delivery is attempted as the probe' end
             from mudou
         )
         select coalesce(m.circuito, a.circuito) as circuito, coalesce(m.circuito_desde, a.circuito_desde) as circuito_desde,
                coalesce(m.circuito_aberto_ate, a.circuito_aberto_ate) as circuito_aberto_ate,
                coalesce(m.circuito_sonda_ate, a.circuito_sonda_ate) as circuito_sonda_ate,
                m.id is not null as tomada, a.circuito as de
           from antes a left join mudou m on m.id = a.id`,
        origem,
        token,
        this.options.circuito.sondaMs,
        uuidv7(),
      );
      if (!linha) return null;
      this.aplicar(origem, linha);
      if (!linha.tomada) return null;
      this.options.logger.info(
        { origem, de: linha.de, sonda_ate: linha.circuito_sonda_ate },
        linha.de === 'aberto'
          ? 'destination circuit half-open: the open period is over, one delivery is attempted as the probe'
          : 'destination circuit half-open: the probe under way lost its lease, another delivery is attempted as the probe',
      );
      this.options.aoMudarCircuito?.(origem, 'meio_aberto');
      return token;
    } catch (error) {
      this.options.logger.warn({ err: error, origem }, 'destination circuit probe not taken; a later job tries again');
      return null;
    } finally {
      this.mudando.delete(origem);
    }
  }

  /**
   * The probe's result: a success closes the circuit, a failure opens it again for twice as long (up
   * to the cap). Nothing changes when the probe lost its lease meanwhile or the circuit was closed by hand.
   */
  async concluirSonda(origem: string, token: string, sucesso: boolean, resultado: string): Promise<void> {
    const { abertoMs, abertoMaximoMs } = this.options.circuito;
    const detalhe = sucesso ? `the probe succeeded (${resultado})` : `the probe failed (${resultado.slice(0, 300)})`;
    try {
      const [linha] = await this.options.db.$queryRawUnsafe<Transicao[]>(
        `with mudou as (
           update destino d
              set circuito = case when $3::boolean then 'fechado' else 'aberto' end,
                  circuito_desde = now(),
                  circuito_aberturas = case when $3::boolean then 0 else d.circuito_aberturas + 1 end,
                  circuito_aberto_ate = case when $3::boolean then null
                    else now() + least($5::bigint, $4::bigint * power(2, least(d.circuito_aberturas, 30))::bigint)
                                 * interval '1 millisecond' end,
                  circuito_sonda = null, circuito_sonda_ate = null
            where d.origem = $1::text and d.circuito = 'meio_aberto' and d.circuito_sonda = $2::uuid
           returning d.id, ${COLUNAS_DO_CIRCUITO}
         ),
         historico as (
           insert into destino_circuito (id, destino_id, em, de, para, motivo, detalhe, aberto_ate)
           select $6::uuid, id, circuito_desde, 'meio_aberto', circuito,
                  case when $3::boolean then 'sonda_bem_sucedida' else 'sonda_falhou' end, $7::text, circuito_aberto_ate
             from mudou
         )
         select ${COLUNAS_DO_CIRCUITO} from mudou`,
        origem,
        token,
        sucesso,
        abertoMs,
        abertoMaximoMs,
        uuidv7(),
        detalhe,
      );
      if (!linha) {
        this.options.logger.info(
          { origem },
          'probe result ignored: the probe lost its lease or the circuit was closed meanwhile',
        );
        return;
      }
      this.aplicar(origem, linha);
      if (sucesso) this.options.logger.info({ origem, resultado }, `destination circuit closed: ${detalhe}`);
      else
        this.options.logger.warn(
          { origem, resultado, aberto_ate: linha.circuito_aberto_ate },
          `destination circuit opened again: ${detalhe}`,
        );
      this.options.aoMudarCircuito?.(origem, linha.circuito);
    } catch (error) {
      // The lease ends on its own: another job takes the probe then.
      this.options.logger.warn({ err: error, origem }, 'probe result not recorded; the probe lease ends it');
    }
  }

  /** A probe taken but not attempted (the worker is stopping): its lease ends now, so another job takes it. */
  async devolverSonda(origem: string, token: string): Promise<void> {
    await this.options.db.$executeRaw`
      update destino set circuito_sonda_ate = now()
       where origem = ${origem} and circuito = 'meio_aberto' and circuito_sonda = ${token}::uuid`.catch((error) =>
      this.options.logger.warn({ err: error, origem }, 'probe not given back; its lease ends it'),
    );
  }

  /** This process's view of a row after a transition it made or met. */
  private aplicar(origem: string, transicao: Transicao): void {
    this.geracao += 1;
    this.aplicadas.set(origem, { geracao: this.geracao, transicao: pick(transicao) });
    this.linhas.set(origem, { ...(this.linhas.get(origem) ?? { origem, ...PADRAO }), ...pick(transicao) });
    for (const ouvinte of this.ouvintesDoCircuito) ouvinte(origem);
  }

  /** The figures not yet written of an origin and minute (made empty when absent). */
  private figuras(origem: string, minuto: number): Figuras {
    const porMinuto = this.pendentes.get(origem) ?? new Map<number, Figuras>();
    this.pendentes.set(origem, porMinuto);
    const f = porMinuto.get(minuto) ?? { tentativas: 0, falhas: 0, duracoes: Array<number>(12).fill(0) };
    porMinuto.set(minuto, f);
    return f;
  }

  /** One refresh (the periodic job never runs two at once). */
  private async passar(): Promise<void> {
    try {
      await Promise.all([this.ler(), this.gravarFiguras(), this.gravarEmAndamento()]);
      this.options.aoLer?.();
      for (const ouvinte of this.ouvintes) ouvinte();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'destinations not refreshed; the last rules stay');
    }
  }

  private async ler(): Promise<void> {
    const inicio = this.geracao;
    const [linhas, consumidores] = await Promise.all([
      this.options.db.$queryRawUnsafe<Linha[]>(
        `select origem, concorrencia_maxima, limite_por_segundo, pausado, ${COLUNAS_DO_CIRCUITO} from destino`,
      ),
      this.options.broker.checkQueue(this.options.filaDeEntregas).then((q) => q.consumerCount),
    ]);
    this.linhas = new Map(linhas.map((l) => [l.origem, l]));
    this.workers = Math.max(1, consumidores);
    for (const [origem, { geracao, transicao }] of this.aplicadas) {
      const linha = this.linhas.get(origem);
      // Made while this read was under way: the read may predate it, so it stands until the next one.
      if (geracao > inicio && linha) this.linhas.set(origem, { ...linha, ...transicao });
      else if (geracao <= inicio) this.aplicadas.delete(origem);
    }
    // A window counts only attempts since its circuit last closed (by hand, or by a probe elsewhere);
    // an open circuit counts nothing.
    const inicioDaJanela = Date.now() - this.options.circuito.janelaMs;
    for (const [origem, janela] of this.janelas) {
      const linha = this.linhas.get(origem);
      if (linha && linha.circuito !== 'fechado') {
        this.janelas.delete(origem);
        continue;
      }
      janela.esquecerAntesDe(Math.max(inicioDaJanela, linha?.circuito_desde?.getTime() ?? 0));
      if (janela.vazia()) this.janelas.delete(origem);
    }
  }

  private async criar(origem: string): Promise<void> {
    const agora = new Date();
    try {
      await this.options.db.$executeRaw`
        insert into destino (id, origem, criado_em, atualizado_em)
        values (${uuidv7()}::uuid, ${origem}, ${agora}, ${agora})
        on conflict (origem) do nothing`;
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
    const validadeMs = 3 * this.options.intervaloMs;
    await this.options.db.$executeRaw`
      with antigas as (delete from destino_em_andamento where valido_ate < now() - interval '1 hour')
      insert into destino_em_andamento (destino_id, processo, em_andamento, valido_ate)
      select d.id, ${this.processo}::uuid, f.n, now() + ${validadeMs} * interval '1 millisecond'
        from json_to_recordset(${JSON.stringify(linhas)}::json) as f(origem text, n int)
        join destino d on d.origem = f.origem
      on conflict (destino_id, processo) do update
        set em_andamento = excluded.em_andamento, valido_ate = excluded.valido_ate`;
    this.comAtivos = new Set(linhas.filter((l) => l.n > 0).map((l) => l.origem));
  }

  private async gravarFiguras(): Promise<void> {
    if (this.pendentes.size === 0) return;
    const lote = this.pendentes;
    this.pendentes = new Map();
    const linhas = [...lote].flatMap(([origem, porMinuto]) =>
      [...porMinuto].map(([minuto, f]) => ({ origem, minuto: new Date(minuto).toISOString(), ...f })),
    );
    try {
      await this.options.db.$executeRaw`
        insert into destino_minuto (destino_id, minuto, tentativas, falhas, duracoes)
        select d.id, f.minuto, f.tentativas, f.falhas, array(select v::int from jsonb_array_elements_text(f.duracoes) with ordinality as e(v, n) order by n)
          from json_to_recordset(${JSON.stringify(linhas)}::json)
               as f(origem text, minuto timestamptz, tentativas int, falhas int, duracoes jsonb)
          join destino d on d.origem = f.origem
        on conflict (destino_id, minuto) do update
          set tentativas = destino_minuto.tentativas + excluded.tentativas,
              falhas = destino_minuto.falhas + excluded.falhas,
              duracoes = array(select a + b from unnest(destino_minuto.duracoes, excluded.duracoes) with ordinality as t(a, b, n)
                               order by n)`;
    } catch (error) {
      // Kept for the next pass, added to what came meanwhile.
      for (const [origem, porMinuto] of lote)
        for (const [minuto, f] of porMinuto) {
          const atual = this.figuras(origem, minuto);
          atual.tentativas += f.tentativas;
          atual.falhas += f.falhas;
          atual.duracoes = atual.duracoes.map((n, i) => n + f.duracoes[i]!);
        }
      throw error;
    }
  }
}

/** The circuit's columns of a transition (a statement may return more). */
const pick = (t: Transicao): Transicao => ({
  circuito: t.circuito,
  circuito_desde: t.circuito_desde,
  circuito_aberto_ate: t.circuito_aberto_ate,
  circuito_sonda_ate: t.circuito_sonda_ate,
});
