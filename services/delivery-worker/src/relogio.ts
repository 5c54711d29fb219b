/** The clock and the dice of the worker's rules (fixed in unit tests). */
export interface Relogio {
  /** Milliseconds since the epoch, as Date.now. */
  agora(): number;
  /** A number in [0, 1): the retries' jitter. */
  aleatorio(): number;
}

export const relogioDoSistema: Relogio = { agora: () => Date.now(), aleatorio: () => Math.random() };
