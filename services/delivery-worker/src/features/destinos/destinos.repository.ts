import { uuidv7 } from '@hub/database';
import type { DbClient } from '@hub/hub-data';
import type { Circuito, Contagem } from './circuito';

/** A destino row as the workers read it. */
export interface Linha {
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

/** A transition as a statement returns it. */
export interface Transicao {
  circuito: Circuito;
  circuito_desde: Date | null;
  circuito_aberto_ate: Date | null;
  circuito_sonda_ate: Date | null;
}

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

/** The columns of a destino row that the workers read (the circuit's as the transitions return them). */
const COLUNAS_DO_CIRCUITO = 'circuito, circuito_desde, circuito_aberto_ate, circuito_sonda_ate';

/**
 * The statements of the destinations' rules, figures and attempts in flight (architecture §4,
 * Destino); the circuit's transitions are `circuitoRepository`.
 */
export function destinosRepository(db: DbClient) {
  return {
    lerLinhas: () =>
      db.$queryRawUnsafe<Linha[]>(
        `select origem, concorrencia_maxima, limite_por_segundo, pausado, ${COLUNAS_DO_CIRCUITO} from destino`,
      ),

    /** An origin met without a row gets one (the defaults). */
    async criar(origem: string): Promise<void> {
      const agora = new Date();
      await db.$executeRaw`
        insert into destino (id, origem, criado_em, atualizado_em)
        values (${uuidv7()}::uuid, ${origem}, ${agora}, ${agora})
        on conflict (origem) do nothing`;
    },

    /** This process's POSTs under way per origin, valid for `validadeMs`; rows of processes gone for an hour are deleted. */
    async gravarEmAndamento(processo: string, linhas: { origem: string; n: number }[], validadeMs: number) {
      await db.$executeRaw`
        with antigas as (delete from destino_em_andamento where valido_ate < now() - interval '1 hour')
        insert into destino_em_andamento (destino_id, processo, em_andamento, valido_ate)
        select d.id, ${processo}::uuid, f.n, now() + ${validadeMs} * interval '1 millisecond'
          from json_to_recordset(${JSON.stringify(linhas)}::json) as f(origem text, n int)
          join destino d on d.origem = f.origem
        on conflict (destino_id, processo) do update
          set em_andamento = excluded.em_andamento, valido_ate = excluded.valido_ate`;
    },

    /** This process's attempts in flight taken back (at stop). */
    async esquecerEmAndamento(processo: string): Promise<void> {
      await db.$executeRaw`delete from destino_em_andamento where processo = ${processo}::uuid`;
    },

    /** Adds the figures of each origin and minute to destino_minuto. */
    async gravarFiguras(linhas: FigurasDoMinuto[]): Promise<void> {
      await db.$executeRaw`
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
    },
  };
}
export type DestinosRepository = ReturnType<typeof destinosRepository>;

/** The circuit breaker's conditional transitions (issue 24), each with its line of history. */
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
      const [linha] = await db.$queryRawUnsafe<Transicao[]>(
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
      return linha;
    },

    /**
     * Takes the origin's probe (half-open) under `token` for `sondaMs`: the open period is over, or
     * the probe under way lost its lease. The row as it stands after, and whether this took it.
     */
    async sondar(
      origem: string,
      token: string,
      sondaMs: number,
    ): Promise<(Transicao & { tomada: boolean; de: Circuito }) | undefined> {
      const [linha] = await db.$queryRawUnsafe<(Transicao & { tomada: boolean; de: Circuito })[]>(
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
        sondaMs,
        uuidv7(),
      );
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
      const [linha] = await db.$queryRawUnsafe<Transicao[]>(
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
      return linha;
    },

    /** A probe taken but not attempted: its lease ends now, so another job takes it. */
    async devolverSonda(origem: string, token: string): Promise<void> {
      await db.$executeRaw`
      update destino set circuito_sonda_ate = now()
       where origem = ${origem} and circuito = 'meio_aberto' and circuito_sonda = ${token}::uuid`;
    },
  };
}
export type CircuitoRepository = ReturnType<typeof circuitoRepository>;
