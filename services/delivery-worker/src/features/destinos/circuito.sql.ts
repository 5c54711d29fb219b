import { prismaStatement } from '@hub/database';
import type { Circuito } from './circuito';
import { COLUNAS_DO_CIRCUITO, type Transicao } from './destinos.sql';

// The circuit breaker's conditional transitions (circuitoRepository), each with its line of history,
// run on Prisma and checked by entregas/sql.test.ts.

const COLUNAS_DA_TRANSICAO = {
  circuito: 'text',
  circuito_desde: 'timestamptz',
  circuito_aberto_ate: 'timestamptz',
  circuito_sonda_ate: 'timestamptz',
} as const;

/**
 * Opens origin $1's circuit ($2 failures of $3 attempts counted since $6; open $4 ms doubled at each
 * opening, $5 ms at most; $7 the history line's id, $8 its detail), if still closed since before $6.
 */
export const CIRCUITO_ABRIR = prismaStatement<Transicao>({
  name: 'circuito_abrir',
  text: `with mudou as (
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
  parameters: ['text', 'int4', 'int4', 'int8', 'int8', 'timestamptz', 'uuid', 'text'],
  columns: COLUNAS_DA_TRANSICAO,
});

/** Takes origin $1's probe under token $2 for $3 ms ($4 the history line's id): the row after, and whether it took it. */
export const CIRCUITO_SONDAR = prismaStatement<Transicao & { tomada: boolean; de: Circuito }>({
  name: 'circuito_sondar',
  text: `with antes as (
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
  parameters: ['text', 'uuid', 'int4', 'uuid'],
  columns: { ...COLUNAS_DA_TRANSICAO, tomada: 'bool', de: 'text' },
});

/** The result $3 of origin $1's probe under token $2 ($4, $5 as CIRCUITO_ABRIR's; $6 the line's id, $7 its detail). */
export const CIRCUITO_CONCLUIR_SONDA = prismaStatement<Transicao>({
  name: 'circuito_concluir_sonda',
  text: `with mudou as (
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
  parameters: ['text', 'uuid', 'bool', 'int8', 'int8', 'uuid', 'text'],
  columns: COLUNAS_DA_TRANSICAO,
});

/** A probe of origin $1 under token $2 taken but not attempted: its lease ends now. */
export const CIRCUITO_DEVOLVER_SONDA = prismaStatement({
  name: 'circuito_devolver_sonda',
  text: `update destino set circuito_sonda_ate = now()
       where origem = $1 and circuito = 'meio_aberto' and circuito_sonda = $2::uuid`,
  parameters: ['text', 'uuid'],
  columns: {},
});
