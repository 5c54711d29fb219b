/** The states of a destination's circuit breaker (destino.circuito). */
export type Circuito = 'fechado' | 'aberto' | 'meio_aberto';

/** When an origin's circuit opens, and for how long (DELIVERY_CIRCUIT_*). */
export interface LimiaresDoCircuito {
  /** Failed attempts within the window, over every worker together; 0: circuits never open. */
  minimoDeFalhas: number;
  /** The least share of the window's attempts that failed (0 < parcela ≤ 1). */
  parcela: number;
  janelaMs: number;
  /** The first opening's length; each opening in a row lasts twice the one before… */
  abertoMs: number;
  /** …up to this. */
  abertoMaximoMs: number;
}

export interface Contagem {
  tentativas: number;
  falhas: number;
  /** When the oldest attempt counted started. */
  desdeMs: number;
}

/** How many slices a window is cut into: the window slides a slice at a time. */
const FATIAS = 60;

interface Fatia {
  inicio: number;
  /** Its earliest attempt's start. */
  primeira: number;
  tentativas: number;
  falhas: number;
}

/**
 * One origin's attempts in this process over a sliding window, in slices of 1/60 of it (a minute's
 * window slides by the second): memory is bounded by the slices, whatever the rate.
 */
export class Janela {
  private readonly fatias: Fatia[] = [];
  private readonly fatiaMs: number;

  constructor(private readonly janelaMs: number) {
    this.fatiaMs = Math.max(10, Math.ceil(janelaMs / FATIAS));
  }

  /**
   * One attempt that started at `instanteMs`, counted in the slice of `fimMs`, when its result came
   * (the same when not given). By its end, not its start: an attempt that timed out is known only
   * DELIVERY_TIMEOUT (10 s) after it started, and by its start it would fall before the window's
   * recent part (10 s), which then never saw a destination that stopped answering. Its start stays
   * the slice's `primeira`, for the stale-failure guard.
   */
  anotar(sucesso: boolean, instanteMs: number, fimMs = instanteMs): void {
    const inicio = fimMs - (fimMs % this.fatiaMs);
    let fatia = this.fatias.at(-1);
    // An attempt that ended before the latest slice began (clocks read out of order) counts in that slice.
    if (!fatia || fatia.inicio < inicio) {
      fatia = { inicio, primeira: instanteMs, tentativas: 0, falhas: 0 };
      this.fatias.push(fatia);
    }
    fatia.primeira = Math.min(fatia.primeira, instanteMs);
    fatia.tentativas += 1;
    if (!sucesso) fatia.falhas += 1;
  }

  /** The attempts of the window that ends now, or of its slices that began at `desdeMs` or later. */
  contar(agoraMs: number, desdeMs = agoraMs - this.janelaMs): Contagem {
    this.esquecerAntesDe(agoraMs - this.janelaMs);
    let tentativas = 0;
    let falhas = 0;
    let primeira: number | undefined;
    for (const f of this.fatias) {
      if (f.inicio < desdeMs) continue;
      // A later slice may hold an attempt that started earlier (a slow one): the oldest start of all.
      primeira = Math.min(primeira ?? f.primeira, f.primeira);
      tentativas += f.tentativas;
      falhas += f.falhas;
    }
    return { tentativas, falhas, desdeMs: primeira ?? agoraMs };
  }

  /** Drops the slices that began before `ms` (out of the window, or from before the circuit last closed). */
  esquecerAntesDe(ms: number): void {
    while (this.fatias.length > 0 && this.fatias[0]!.inicio < ms) this.fatias.shift();
  }

  vazia(): boolean {
    return this.fatias.length === 0;
  }
}

/**
 * Whether a process's window opens the circuit. The failures are a share of the threshold, as the
 * limits are (architecture §5, Destinations): the work queue spreads an origin's jobs over its
 * consumers, so each process sees about 1/workers of the failures, and needs ceil(min / workers).
 */
export function deveAbrir(contagem: Contagem, limiares: LimiaresDoCircuito, workers: number): boolean {
  if (limiares.minimoDeFalhas === 0) return false;
  const minimo = Math.max(1, Math.ceil(limiares.minimoDeFalhas / Math.max(1, workers)));
  return contagem.falhas >= minimo && contagem.falhas >= limiares.parcela * contagem.tentativas;
}

/**
 * The window's last part looked at on its own (a sixth: 10 s of a minute's window). A destination
 * that answered for a whole window and then goes down would otherwise keep its circuit closed until
 * its failures outweighed every success of the window (at a steady rate, half a window of failures:
 * 30 s of retries hammering it and of the workers' time spent on them); its recent part turns in a
 * few seconds. The same thresholds apply to both (DELIVERY_CIRCUIT_MIN_FAILURES and _FAILURE_SHARE).
 */
export const PARTE_RECENTE = 6;

/**
 * The count that opens the circuit, if any: the whole window's, or its recent part's
 * (PARTE_RECENTE), with the span it covers for the opening's reason.
 */
export function contagemQueAbre(
  janela: Janela,
  agoraMs: number,
  limiares: LimiaresDoCircuito,
  workers: number,
): { contagem: Contagem; duranteMs: number } | undefined {
  const inteira = janela.contar(agoraMs);
  if (deveAbrir(inteira, limiares, workers)) return { contagem: inteira, duranteMs: limiares.janelaMs };
  const duranteMs = Math.ceil(limiares.janelaMs / PARTE_RECENTE);
  const recente = janela.contar(agoraMs, agoraMs - duranteMs);
  return deveAbrir(recente, limiares, workers) ? { contagem: recente, duranteMs } : undefined;
}

/**
 * Whether an attempt says the destination itself is down, for its circuit: no answer (refused,
 * reset, timed out), a 5xx or a 429. Any other answer, a 4xx included, came from a live server that
 * chose to refuse that one delivery: counted as a failure of the delivery, never of the origin's
 * circuit, since the circuit is shared by every subscription of the origin and one subscriber whose
 * deliveries are refused (a receiver that rejects another subscription's `assinatura_id`) must not
 * hold the others' deliveries. A probe answered so closes the circuit.
 */
export function destinoFora(resultado: { sucesso: boolean; statusHttp: number | null }): boolean {
  if (resultado.sucesso) return false;
  const status = resultado.statusHttp;
  return status === null || status >= 500 || status === 429;
}
