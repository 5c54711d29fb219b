import type { Broker } from '@hub/broker';
import { uuidv7 } from '@hub/database';
import type { DbClient } from '@hub/hub-data';
import type { Logger } from '@hub/log';

/** What this worker process obeys for one origin now. */
export interface Regras {
  /** POSTs under way at once from this process: its share of the row's concorrencia_maxima. */
  concorrencia: number;
  /** POSTs started per second by this process (its share of limite_por_segundo); null: no limit. */
  porSegundo: number | null;
  pausado: boolean;
}

/**
 * Whether an origin's jobs are held back now: none is attempted, they wait (and, isolated, sit still
 * in their destination's own queue, architecture §5). The one predicate of "held": the pause today;
 * the circuit breaker's open state belongs here too.
 */
export function retido(regras: Regras): boolean {
  return regras.pausado;
}

/**
 * How many jobs of an isolated destination's queue this process takes at once: its share of the
 * concurrency (and of the per-second limit), so every job taken gets its turn at once instead of
 * waiting in memory, being deferred and cycling through the delay queues.
 */
export function prefetchDoDestino(regras: Regras): number {
  return Math.max(1, Math.min(regras.concorrencia, regras.porSegundo ?? regras.concorrencia));
}

interface Linha {
  origem: string;
  concorrencia_maxima: number;
  limite_por_segundo: number | null;
  pausado: boolean;
}

/** The defaults of a destino row (migration 008), for an origin met before its row is read. */
const PADRAO: Omit<Linha, 'origem'> = { concorrencia_maxima: 10, limite_por_segundo: null, pausado: false };
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
 */
export class Destinos {
  private linhas = new Map<string, Linha>();
  private workers = 1;
  private readonly conhecidas = new Set<string>();
  private pendentes = new Map<string, Map<number, Figuras>>();
  private timer?: NodeJS.Timeout;
  private corrente?: Promise<void>;
  private readonly ouvintes: (() => void)[] = [];
  /** This process in destino_em_andamento. */
  private readonly processo = uuidv7();
  /** The origins whose last row written said POSTs were under way (a zero is written once after). */
  private comAtivos = new Set<string>();

  constructor(private readonly options: DestinosOptions) {}

  /** Reads the rows once, then keeps them fresh. */
  async iniciar(): Promise<void> {
    await this.passar();
    this.timer = setInterval(() => void this.passar(), this.options.intervaloMs);
    this.timer.unref();
  }

  /** Stops refreshing (the pass under way ends first); `gravarRestantes` writes what comes after. */
  async parar(): Promise<void> {
    clearInterval(this.timer);
    await this.corrente;
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

  regras(origem: string): Regras {
    const linha = this.linhas.get(origem) ?? { origem, ...PADRAO };
    if (!this.linhas.has(origem) && !this.conhecidas.has(origem) && /^https?:\/\//.test(origem)) {
      this.conhecidas.add(origem);
      void this.criar(origem);
    }
    const parte = (total: number) => Math.max(1, Math.ceil(total / this.workers));
    return {
      concorrencia: Math.min(this.options.tetoPorProcesso, parte(linha.concorrencia_maxima)),
      porSegundo: linha.limite_por_segundo === null ? null : parte(linha.limite_por_segundo),
      pausado: linha.pausado,
    };
  }

  /** One attempt to an origin, for its figures. */
  anotar(origem: string, sucesso: boolean, duracaoMs: number, instante = new Date()): void {
    const f = this.figuras(origem, Math.floor(instante.getTime() / MINUTO_MS) * MINUTO_MS);
    f.tentativas += 1;
    if (!sucesso) f.falhas += 1;
    const balde = LIMITES_MS.findIndex((limite) => duracaoMs <= limite);
    f.duracoes[balde === -1 ? 11 : balde]! += 1;
  }

  /** The figures not yet written of an origin and minute (made empty when absent). */
  private figuras(origem: string, minuto: number): Figuras {
    const porMinuto = this.pendentes.get(origem) ?? new Map<number, Figuras>();
    this.pendentes.set(origem, porMinuto);
    const f = porMinuto.get(minuto) ?? { tentativas: 0, falhas: 0, duracoes: Array<number>(12).fill(0) };
    porMinuto.set(minuto, f);
    return f;
  }

  private passar(): Promise<void> {
    this.corrente ??= (async () => {
      try {
        await Promise.all([this.ler(), this.gravarFiguras(), this.gravarEmAndamento()]);
        this.options.aoLer?.();
        for (const ouvinte of this.ouvintes) ouvinte();
      } catch (error) {
        this.options.logger.warn({ err: error }, 'destinations not refreshed; the last rules stay');
      } finally {
        this.corrente = undefined;
      }
    })();
    return this.corrente;
  }

  private async ler(): Promise<void> {
    const [linhas, consumidores] = await Promise.all([
      this.options.db.$queryRaw<Linha[]>`
        select origem, concorrencia_maxima, limite_por_segundo, pausado from destino`,
      this.options.broker.checkQueue(this.options.filaDeEntregas).then((q) => q.consumerCount),
    ]);
    this.linhas = new Map(linhas.map((l) => [l.origem, l]));
    this.workers = Math.max(1, consumidores);
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
