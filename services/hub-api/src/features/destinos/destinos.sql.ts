import { prismaStatement } from '@hub/database';
import type { Figuras, Transicao } from './destinos.repository';

// The destinations' statements of fixed text, run on Prisma (runOnPrisma), checked by publicacao/sql.test.ts.

/** The latest $2 transitions of each destination of $1, newest first (the index on (destino_id, em)). */
export const DESTINO_HISTORICO = prismaStatement<Transicao & { destino_id: string }>({
  name: 'destino_historico',
  text: `select t.destino_id::text as destino_id, t.em, t.de, t.para, t.motivo, t.detalhe, t.falhas, t.tentativas,
               t.aberto_ate, t.por
          from unnest($1::uuid[]) as d(id)
          cross join lateral (
            select * from destino_circuito c where c.destino_id = d.id order by c.em desc, c.id desc limit $2::int
          ) as t
         order by t.destino_id, t.em desc, t.id desc`,
  parameters: ['uuid[]', 'int4'],
  columns: {
    destino_id: 'text',
    em: 'timestamptz',
    de: 'text',
    para: 'text',
    motivo: 'text',
    detalhe: 'text',
    falhas: 'int4',
    tentativas: 'int4',
    aberto_ate: 'timestamptz',
    por: 'text',
  },
});

/** Closes destination $1's circuit by hand ($2: the history line's id, $3: who); the state it left. */
export const DESTINO_FECHAR_CIRCUITO = prismaStatement<{ de: string }>({
  name: 'destino_fechar_circuito',
  text: `with antes as (select id, circuito from destino where id = $1::uuid for update),
        mudou as (
          update destino d
             set circuito = 'fechado', circuito_desde = now(), circuito_aberturas = 0,
                 circuito_aberto_ate = null, circuito_sonda = null, circuito_sonda_ate = null
            from antes a
           where d.id = a.id and a.circuito <> 'fechado'
          returning d.id, d.circuito_desde, a.circuito as de
        ),
        historico as (
          insert into destino_circuito (id, destino_id, em, de, para, motivo, detalhe, por)
          select $2::uuid, id, circuito_desde, de, 'fechado', 'manual', 'closed by hand by an operator', $3
            from mudou
        )
        select de from mudou`,
  parameters: ['uuid', 'uuid', 'text'],
  columns: { de: 'text' },
});

/** The figures of destinations $1 from other tables, the attempts since $2. */
export const DESTINO_FIGURAS = prismaStatement<Figuras>({
  name: 'destino_figuras',
  text: `select d.id::text as id,
          (select count(*) from assinatura a
            where origem_da_url(a.url_de_destino) = d.origem and a.excluida_em is null)::int as assinaturas,
          coalesce((select sum(v.em_andamento) from destino_em_andamento v
            where v.destino_id = d.id and v.valido_ate > now()), 0)::int as em_andamento,
          coalesce((select sum(m.tentativas) from destino_minuto m where m.destino_id = d.id and m.minuto >= $2), 0)::int as tentativas,
          coalesce((select sum(m.falhas) from destino_minuto m where m.destino_id = d.id and m.minuto >= $2), 0)::int as falhas,
          (select array_agg(soma order by balde) from (
            select b.balde, sum(b.n)::int as soma
            from destino_minuto m, unnest(m.duracoes) with ordinality as b(n, balde)
            where m.destino_id = d.id and m.minuto >= $2
            group by b.balde) as baldes) as duracoes
        from destino d
        where d.id = any($1::uuid[])`,
  parameters: ['uuid[]', 'timestamptz'],
  columns: {
    id: 'text',
    assinaturas: 'int4',
    em_andamento: 'int4',
    tentativas: 'int4',
    falhas: 'int4',
    duracoes: '_int4',
  },
});

/** The destinations isolated now, with their origins (isolados.ts). */
export const DESTINOS_ISOLADOS = prismaStatement<{ id: string; origem: string }>({
  name: 'destinos_isolados',
  text: `select id::text, origem from destino where isolamento = 'isolada'`,
  parameters: [],
  columns: { id: 'text', origem: 'text' },
});
