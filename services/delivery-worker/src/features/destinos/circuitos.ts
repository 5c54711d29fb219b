import { randomUUID } from 'node:crypto';
import type { Logger } from '@hub/log';
import type { Relogio } from '../../relogio';
import { type Circuito, type Contagem, contagemQueAbre, Janela, type LimiaresDoCircuito } from './circuito';
import { type CircuitoRepository, type Linha, type Transicao, transicaoDe } from './destinos.repository';

/** The rows as `Destinos` keeps them: what the circuits read and change between refreshes. */
export interface VistaDasLinhas {
  linha(origem: string): Linha | undefined;
  /** This process's view of a row after a transition it made or met. */
  mudar(origem: string, transicao: Transicao): void;
  /** The work queue's consumers: a process needs its share of the threshold. */
  workers(): number;
}

export interface CircuitosOptions {
  repo: CircuitoRepository;
  logger: Logger;
  relogio: Pick<Relogio, 'agora'>;
  /** When circuits open and for how long; `sondaMs`: the lease of a probe (its POST, signing and recording). */
  limiares: LimiaresDoCircuito & { sondaMs: number };
  /** Told of each transition of a circuit this process made (metrics). */
  aoMudarCircuito?: (origem: string, para: Circuito) => void;
}

/**
 * The circuit breaker's side of this process (issue 24): it counts its attempts per origin over a
 * sliding window and opens the origin's circuit in the row (a conditional UPDATE, with a line of
 * history) when its share of the threshold failed; every worker obeys the row within a refresh.
 * Once the open period is over, one job takes the probe's lease (another conditional UPDATE) and
 * its attempt closes the circuit or opens it again for twice as long. The transitions it makes
 * stand over a refresh read before them (`reaplicar`).
 */
export class Circuitos {
  /** This process's attempts per origin since its circuit last closed, within the window. */
  private readonly janelas = new Map<string, Janela>();
  /** Origins whose circuit this process is opening, or whose probe it is asking for, now. */
  private readonly mudando = new Set<string>();
  /** Transitions this process made, by origin, with a counter: a refresh read before one does not undo it. */
  private readonly aplicadas = new Map<string, { geracao: number; transicao: Transicao }>();
  private geracaoAtual = 0;
  /** Told of each circuit transition this process made or met on a statement of its own, by origin. */
  private readonly ouvintes: ((origem: string) => void)[] = [];

  constructor(
    private readonly o: CircuitosOptions,
    private readonly vista: VistaDasLinhas,
  ) {}

  /** The count of transitions so far: a refresh notes it before it reads. */
  get geracao(): number {
    return this.geracaoAtual;
  }

  /** See `Destinos.aoMudarCircuito`. */
  aoMudar(ouvinte: (origem: string) => void): void {
    this.ouvintes.push(ouvinte);
  }

  /** An attempt in the window of a closed circuit; the circuit opens when the window says so. */
  contar(origem: string, sucesso: boolean, instanteMs: number): void {
    const limiares = this.o.limiares;
    // An open circuit counts nothing. An origin whose row this process has not read yet (a
    // subscription just created) counts already: the opening finds its row, or opens nothing.
    if (limiares.minimoDeFalhas === 0 || (this.vista.linha(origem)?.circuito ?? 'fechado') !== 'fechado') return;
    let janela = this.janelas.get(origem);
    if (!janela) {
      janela = new Janela(limiares.janelaMs);
      this.janelas.set(origem, janela);
    }
    const agora = this.o.relogio.agora();
    janela.anotar(sucesso, instanteMs, agora);
    // A success never makes the failures more or their share larger: only a failure is looked at.
    if (sucesso || this.mudando.has(origem)) return;
    const abre = contagemQueAbre(janela, agora, limiares, this.vista.workers());
    if (abre) void this.abrir(origem, abre.contagem, abre.duranteMs);
  }

  /**
   * After a refresh read the rows: the transitions made while it was under way (after `inicio`)
   * stand over it until the next one; a window counts only attempts since its circuit last closed
   * (by hand, or by a probe elsewhere); an open circuit counts nothing.
   */
  reaplicar(linhas: Map<string, Linha>, inicio: number): void {
    for (const [origem, { geracao, transicao }] of this.aplicadas) {
      const linha = linhas.get(origem);
      // Made while this read was under way: the read may predate it, so it stands until the next one.
      if (geracao > inicio && linha) linhas.set(origem, { ...linha, ...transicao });
      else if (geracao <= inicio) this.aplicadas.delete(origem);
    }
    const inicioDaJanela = this.o.relogio.agora() - this.o.limiares.janelaMs;
    for (const [origem, janela] of this.janelas) {
      const linha = linhas.get(origem);
      if (linha && linha.circuito !== 'fechado') {
        this.janelas.delete(origem);
        continue;
      }
      janela.esquecerAntesDe(Math.max(inicioDaJanela, linha?.circuito_desde?.getTime() ?? 0));
      if (janela.vazia()) this.janelas.delete(origem);
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
      const linha = await this.o.repo.sondar(origem, token, this.o.limiares.sondaMs);
      if (!linha) return null;
      this.aplicar(origem, linha);
      if (!linha.tomada) return null;
      this.o.logger.info(
        { origem, de: linha.de, sonda_ate: linha.circuito_sonda_ate },
        linha.de === 'aberto'
          ? 'destination circuit half-open: the open period is over, one delivery is attempted as the probe'
          : 'destination circuit half-open: the probe under way lost its lease, another delivery is attempted as the probe',
      );
      this.o.aoMudarCircuito?.(origem, 'meio_aberto');
      return token;
    } catch (error) {
      this.o.logger.warn({ err: error, origem }, 'destination circuit probe not taken; a later job tries again');
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
    const { abertoMs, abertoMaximoMs } = this.o.limiares;
    const { logger } = this.o;
    const detalhe = sucesso ? `the probe succeeded (${resultado})` : `the probe failed (${resultado.slice(0, 300)})`;
    try {
      const linha = await this.o.repo.concluirSonda(origem, token, sucesso, abertoMs, abertoMaximoMs, detalhe);
      if (!linha) {
        logger.info({ origem }, 'probe result ignored: the probe lost its lease or the circuit was closed meanwhile');
        return;
      }
      this.aplicar(origem, linha);
      if (sucesso) logger.info({ origem, resultado }, `destination circuit closed: ${detalhe}`);
      else
        logger.warn(
          { origem, resultado, aberto_ate: linha.circuito_aberto_ate },
          `destination circuit opened again: ${detalhe}`,
        );
      this.o.aoMudarCircuito?.(origem, linha.circuito);
    } catch (error) {
      // The lease ends on its own: another job takes the probe then.
      logger.warn({ err: error, origem }, 'probe result not recorded; the probe lease ends it');
    }
  }

  /** A probe taken but not attempted (the worker is stopping): its lease ends now, so another job takes it. */
  async devolverSonda(origem: string, token: string): Promise<void> {
    await this.o.repo
      .devolverSonda(origem, token)
      .catch((error) => this.o.logger.warn({ err: error, origem }, 'probe not given back; its lease ends it'));
  }

  /**
   * Opens the circuit: only if it is still closed and was not closed again after the oldest attempt
   * counted (by hand, or by another worker's probe), so stale failures never reopen it.
   */
  private async abrir(origem: string, contagem: Contagem, duranteMs: number): Promise<void> {
    const { minimoDeFalhas, parcela, abertoMs, abertoMaximoMs } = this.o.limiares;
    const workers = this.vista.workers();
    const parte = Math.ceil(minimoDeFalhas / workers);
    const detalhe =
      `${contagem.falhas} of ${contagem.tentativas} attempts failed within ${duranteMs / 1000} s at one of ${workers} ` +
      `worker(s) (threshold: ${minimoDeFalhas} failures over all workers, ${parte} for each, and at least ` +
      `${Math.round(parcela * 100)} % of the attempts)`;
    this.mudando.add(origem);
    try {
      const linha = await this.o.repo.abrir(origem, contagem, abertoMs, abertoMaximoMs, detalhe);
      // Opened here, or already open / closed since by someone else: this window has served.
      this.janelas.delete(origem);
      if (!linha) return;
      this.aplicar(origem, linha);
      this.o.logger.warn(
        {
          origem,
          falhas: contagem.falhas,
          tentativas: contagem.tentativas,
          janela_ms: duranteMs,
          aberto_ate: linha.circuito_aberto_ate,
        },
        `destination circuit opened: ${detalhe}`,
      );
      this.o.aoMudarCircuito?.(origem, 'aberto');
    } catch (error) {
      this.o.logger.warn({ err: error, origem }, 'destination circuit not opened; the next failure tries again');
    } finally {
      this.mudando.delete(origem);
    }
  }

  private aplicar(origem: string, transicao: Transicao): void {
    this.geracaoAtual += 1;
    this.aplicadas.set(origem, { geracao: this.geracaoAtual, transicao: transicaoDe(transicao) });
    this.vista.mudar(origem, transicaoDe(transicao));
    for (const ouvinte of this.ouvintes) ouvinte(origem);
  }
}
