import { prismaStatement } from '@hub/database';
import type { Circuito } from './circuito';

// The destinations' rules, figures and attempts in flight (destinosRepository), run on Prisma and
// checked by entregas/sql.test.ts; the circuit's transitions are circuito.sql.ts.

/** The columns of a destino row that the workers read (the circuit's as the transitions return them). */
export const COLUNAS_DO_CIRCUITO = 'circuito, circuito_desde, circuito_aberto_ate, circuito_sonda_ate';

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

/** Every destination's rules and circuit. */
export const DESTINO_LINHAS = prismaStatement<Linha>({
  name: 'destino_linhas',
  text: `select origem, concorrencia_maxima, limite_por_segundo, pausado, ${COLUNAS_DO_CIRCUITO} from destino`,
  parameters: [],
  columns: {
    origem: 'text',
    concorrencia_maxima: 'int4',
    limite_por_segundo: 'int4',
    pausado: 'bool',
    circuito: 'text',
    circuito_desde: 'timestamptz',
    circuito_aberto_ate: 'timestamptz',
    circuito_sonda_ate: 'timestamptz',
  },
});

/** Origin $2's row (id $1, created at $3), with the defaults, unless it has one. */
export const DESTINO_CRIAR = prismaStatement({
  name: 'destino_criar',
  text: `insert into destino (id, origem, criado_em, atualizado_em)
        values ($1::uuid, $2, $3, $3)
        on conflict (origem) do nothing`,
  parameters: ['uuid', 'text', 'timestamptz'],
  columns: {},
});

/** Process $1's POSTs under way per origin ($3, JSON), valid for $2 ms; rows of processes gone for an hour deleted. */
export const DESTINO_GRAVAR_EM_ANDAMENTO = prismaStatement({
  name: 'destino_gravar_em_andamento',
  text: `with antigas as (delete from destino_em_andamento where valido_ate < now() - interval '1 hour')
        insert into destino_em_andamento (destino_id, processo, em_andamento, valido_ate)
        select d.id, $1::uuid, f.n, now() + $2 * interval '1 millisecond'
          from json_to_recordset($3::json) as f(origem text, n int)
          join destino d on d.origem = f.origem
        on conflict (destino_id, processo) do update
          set em_andamento = excluded.em_andamento, valido_ate = excluded.valido_ate`,
  parameters: ['uuid', 'float8', 'json'],
  columns: {},
});

/** Process $1's attempts in flight taken back. */
export const DESTINO_ESQUECER_EM_ANDAMENTO = prismaStatement({
  name: 'destino_esquecer_em_andamento',
  text: 'delete from destino_em_andamento where processo = $1::uuid',
  parameters: ['uuid'],
  columns: {},
});

/** Adds the figures of each origin and minute ($1, JSON) to destino_minuto. */
export const DESTINO_GRAVAR_FIGURAS = prismaStatement({
  name: 'destino_gravar_figuras',
  text: `insert into destino_minuto (destino_id, minuto, tentativas, falhas, duracoes)
        select d.id, f.minuto, f.tentativas, f.falhas, array(select v::int from jsonb_array_elements_text(f.duracoes) with ordinality as e(v, n) order by n)
          from json_to_recordset($1::json)
               as f(origem text, minuto timestamptz, tentativas int, falhas int, duracoes jsonb)
          join destino d on d.origem = f.origem
        on conflict (destino_id, minuto) do update
          set tentativas = destino_minuto.tentativas + excluded.tentativas,
              falhas = destino_minuto.falhas + excluded.falhas,
              duracoes = array(select a + b from unnest(destino_minuto.duracoes, excluded.duracoes) with ordinality as t(a, b, n)
                               order by n)`,
  parameters: ['json'],
  columns: {},
});
