import { executeOnPrisma, runOnPrisma, uuidv7 } from '@hub/database';
import type { DbClient } from '@hub/hub-data';
import type { Contagem } from './circuito';
import { CIRCUITO_ABRIR, CIRCUITO_CONCLUIR_SONDA, CIRCUITO_DEVOLVER_SONDA, CIRCUITO_SONDAR } from './circuito.sql';
import {
  DESTINO_CRIAR,
  DESTINO_ESQUECER_EM_ANDAMENTO,
  DESTINO_GRAVAR_EM_ANDAMENTO,
  DESTINO_GRAVAR_FIGURAS,
  DESTINO_LINHAS,
  type Transicao,
} from './destinos.sql';

export type { Linha, Transicao } from './destinos.sql';

/** The circuit's columns of a transition (a statement may return more). */
export const transicaoDe = (t: Transicao): Transicao => ({
  circuito: t.circuito,
  circuito_desde: t.circuito_desde,
  circuito_aberto_ate: t.circuito_aberto_ate,
  circuito_sonda_ate: t.circuito_sonda_ate,
});

/** One origin's attempts of one minute, for destino_minuto. */
export interface FigurasDoMinuto {
  origem: string;
  minuto: string;
  tentativas: number;
  falhas: number;
  duracoes: number[];
}

/**
 * The statements of the destinations' rules, figures and attempts in flight (architecture §4,
 * Destino; destinos.sql.ts); the circuit's transitions are `circuitoRepository`.
 */
export function destinosRepository(db: DbClient) {
  return {
    lerLinhas: () => runOnPrisma(db, DESTINO_LINHAS),

    /** An origin met without a row gets one (the defaults). */
    async criar(origem: string): Promise<void> {
      await executeOnPrisma(db, DESTINO_CRIAR, [uuidv7(), origem, new Date()]);
    },

    /** This process's POSTs under way per origin, valid for `validadeMs`; rows of processes gone for an hour are deleted. */
    async gravarEmAndamento(processo: string, linhas: { origem: string; n: number }[], validadeMs: number) {
      await executeOnPrisma(db, DESTINO_GRAVAR_EM_ANDAMENTO, [processo, validadeMs, JSON.stringify(linhas)]);
    },

    /** This process's attempts in flight taken back (at stop). */
    async esquecerEmAndamento(processo: string): Promise<void> {
      await executeOnPrisma(db, DESTINO_ESQUECER_EM_ANDAMENTO, [processo]);
    },

    /** Adds the figures of each origin and minute to destino_minuto. */
    async gravarFiguras(linhas: FigurasDoMinuto[]): Promise<void> {
      await executeOnPrisma(db, DESTINO_GRAVAR_FIGURAS, [JSON.stringify(linhas)]);
    },
  };
}
export type DestinosRepository = ReturnType<typeof destinosRepository>;

/** The circuit breaker's conditional transitions (issue 24), each with its line of history (circuito.sql.ts). */
export function circuitoRepository(db: DbClient) {
  return {
    /**
     * Opens the circuit: only if it is still closed and was not closed again after the oldest attempt
     * counted (by hand, or by another worker's probe), so stale failures never reopen it.
     */
    async abrir(
      origem: string,
      contagem: Contagem,
      abertoMs: number,
      abertoMaximoMs: number,
      detalhe: string,
    ): Promise<Transicao | undefined> {
      const [linha] = await runOnPrisma(db, CIRCUITO_ABRIR, [
        origem,
        contagem.falhas,
        contagem.tentativas,
        abertoMs,
        abertoMaximoMs,
        new Date(contagem.desdeMs),
        uuidv7(),
        detalhe,
      ]);
      return linha;
    },

    /**
     * Takes the origin's probe (half-open) under `token` for `sondaMs`: the open period is over, or
     * the probe under way lost its lease. The row as it stands after, and whether this took it.
     */
    async sondar(origem: string, token: string, sondaMs: number) {
      const [linha] = await runOnPrisma(db, CIRCUITO_SONDAR, [origem, token, sondaMs, uuidv7()]);
      return linha;
    },

    /**
     * The probe's result: a success closes the circuit, a failure opens it again for twice as long (up
     * to the cap). Nothing when the probe lost its lease meanwhile or the circuit was closed by hand.
     */
    async concluirSonda(
      origem: string,
      token: string,
      sucesso: boolean,
      abertoMs: number,
      abertoMaximoMs: number,
      detalhe: string,
    ): Promise<Transicao | undefined> {
      const [linha] = await runOnPrisma(db, CIRCUITO_CONCLUIR_SONDA, [
        origem,
        token,
        sucesso,
        abertoMs,
        abertoMaximoMs,
        uuidv7(),
        detalhe,
      ]);
      return linha;
    },

    /** A probe taken but not attempted: its lease ends now, so another job takes it. */
    async devolverSonda(origem: string, token: string): Promise<void> {
      await executeOnPrisma(db, CIRCUITO_DEVOLVER_SONDA, [origem, token]);
    },
  };
}
export type CircuitoRepository = ReturnType<typeof circuitoRepository>;
