import { prismaStatement } from '@hub/database';

/** Subscription $1's attempts since $2, and how many failed. */
export const SAUDE_TENTATIVAS = prismaStatement<{ tentativas: number; falhas: number }>({
  name: 'saude_tentativas',
  text: `select count(*)::int as tentativas, count(*) filter (where not sucesso)::int as falhas
          from tentativa where assinatura_id = $1::uuid and iniciada_em >= $2`,
  parameters: ['uuid', 'timestamptz'],
  columns: { tentativas: 'int4', falhas: 'int4' },
});

/** Destination $1's duration buckets summed over its minutes since $2. */
export const SAUDE_DURACOES = prismaStatement<{ duracoes: number[] | null }>({
  name: 'saude_duracoes',
  text: `select array_agg(soma order by balde) as duracoes from (
      select b.balde, sum(b.n)::int as soma
        from destino_minuto m, unnest(m.duracoes) with ordinality as b(n, balde)
       where m.destino_id = $1::uuid and m.minuto >= $2
       group by b.balde) as baldes`,
  parameters: ['uuid', 'timestamptz'],
  columns: { duracoes: '_int4' },
});
