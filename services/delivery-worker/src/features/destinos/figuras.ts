import type { DestinosRepository } from './destinos.repository';

/** Upper bounds in ms of destino_minuto.duracoes' buckets (the 12th holds everything longer). */
const LIMITES_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];
const MINUTO_MS = 60_000;

interface Figuras {
  tentativas: number;
  falhas: number;
  duracoes: number[];
}

/**
 * Each attempt counted per origin and minute, added to destino_minuto at each refresh, so GET
 * /destino shows the last hour's failures and durations; counts that could not be written are kept
 * for the next pass.
 */
export class FigurasDosDestinos {
  private pendentes = new Map<string, Map<number, Figuras>>();

  constructor(private readonly repo: Pick<DestinosRepository, 'gravarFiguras'>) {}

  anotar(origem: string, sucesso: boolean, duracaoMs: number, instante: Date): void {
    const f = this.doMinuto(origem, Math.floor(instante.getTime() / MINUTO_MS) * MINUTO_MS);
    f.tentativas += 1;
    if (!sucesso) f.falhas += 1;
    const balde = LIMITES_MS.findIndex((limite) => duracaoMs <= limite);
    f.duracoes[balde === -1 ? 11 : balde]! += 1;
  }

  /** Writes what was counted; a failed write keeps it, added to what comes meanwhile, and throws. */
  async gravar(): Promise<void> {
    if (this.pendentes.size === 0) return;
    const lote = this.pendentes;
    this.pendentes = new Map();
    const linhas = [...lote].flatMap(([origem, porMinuto]) =>
      [...porMinuto].map(([minuto, f]) => ({ origem, minuto: new Date(minuto).toISOString(), ...f })),
    );
    try {
      await this.repo.gravarFiguras(linhas);
    } catch (error) {
      // Kept for the next pass, added to what came meanwhile.
      for (const [origem, porMinuto] of lote)
        for (const [minuto, f] of porMinuto) {
          const atual = this.doMinuto(origem, minuto);
          atual.tentativas += f.tentativas;
          atual.falhas += f.falhas;
          atual.duracoes = atual.duracoes.map((n, i) => n + f.duracoes[i]!);
        }
      throw error;
    }
  }

  /** The figures not yet written of an origin and minute (made empty when absent). */
  private doMinuto(origem: string, minuto: number): Figuras {
    const porMinuto = this.pendentes.get(origem) ?? new Map<number, Figuras>();
    this.pendentes.set(origem, porMinuto);
    const f = porMinuto.get(minuto) ?? { tentativas: 0, falhas: 0, duracoes: Array<number>(12).fill(0) };
    porMinuto.set(minuto, f);
    return f;
  }
}
