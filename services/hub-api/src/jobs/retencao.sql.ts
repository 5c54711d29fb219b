import { prismaStatement } from '@hub/database';

// Retention's statements (retencao.job.ts), each its own transaction but for the fold of the hours,
// run on Prisma and checked by publicacao/sql.test.ts. Each batch's size is its last parameter.

/**
 * A batch of type $1's events received before $2 whose deliveries are none of $3 (not final), up
 * to $4, after ($5, $6) when $5 is not null: erased with their outbox rows, the hours their
 * triggers upsert locked first in hour order (retencao.job.ts says why).
 */
export const RETENCAO_EVENTOS = prismaStatement<{
  eventos: number;
  outbox: number;
  ultimo_em: Date | null;
  ultimo_id: string | null;
}>({
  name: 'retencao_eventos',
  text: `with candidatos as materialized (
          select ev.id, ev.recebido_em from evento ev
           where ev.tipo_de_evento_id = $1::uuid and ev.recebido_em < $2
             and ($5::timestamptz is null or (ev.recebido_em, ev.id) > ($5::timestamptz, $6::uuid))
             and not exists (select 1 from entrega en where en.evento_id = ev.id and en.situacao = any($3::text[]))
           order by ev.recebido_em, ev.id
           limit $4
             for update skip locked
        ), travadas as materialized (
          select en.id, en.evento_id, en.situacao, en.criada_em from entrega en
           where en.evento_id in (select id from candidatos)
             for update
        ), lote as (
          select c.id from candidatos c
           where not exists (select 1 from travadas t where t.evento_id = c.id and t.situacao = any($3::text[]))
        ), horas as (
          insert into resumo_por_hora as r (hora, fatia)
          select hora, fatia_da_transacao() from (
            select date_trunc('hour', c.recebido_em, 'UTC') as hora from candidatos c where c.id in (select id from lote)
            union
            select date_trunc('hour', t.criada_em, 'UTC') from travadas t where t.evento_id in (select id from lote)
            union
            select date_trunc('hour', x.iniciada_em, 'UTC')
              from travadas t join tentativa x on x.entrega_id = t.id
             where t.evento_id in (select id from lote)
          ) h
           order by hora
          on conflict (hora, fatia) do update set eventos_guardados = r.eventos_guardados
        ), saidas as (
          delete from outbox
           where message_id in (select e.id::text from entrega e where e.evento_id in (select id from lote))
          returning 1
        ), apagados as (
          delete from evento where id in (select id from lote) returning 1
        ), ultimo as (
          select recebido_em, id from candidatos order by recebido_em desc, id desc limit 1
        )
        select (select count(*) from apagados)::int as eventos, (select count(*) from saidas)::int as outbox,
               (select recebido_em from ultimo) as ultimo_em, (select id::text from ultimo) as ultimo_id`,
  parameters: ['uuid', 'timestamptz', 'text[]', 'int8', 'timestamptz', 'uuid'],
  columns: { eventos: 'int4', outbox: 'int4', ultimo_em: 'timestamptz', ultimo_id: 'text' },
});

/** A summary hour's slice, as the fold locks and reads it. */
export interface FatiaTravada {
  hora: Date;
  fatia: number;
  eventos_guardados: number;
  entregas_guardadas: number;
  tentativas_guardadas: number;
  tentativas_com_sucesso_guardadas: number;
}

/** Locks the slices of the hours before $1 still to fold, in (hora, fatia) order, skipping those held. */
export const RETENCAO_TRAVAR_HORAS = prismaStatement<FatiaTravada>({
  name: 'retencao_travar_horas',
  text: `select r.hora, r.fatia, r.eventos_guardados, r.entregas_guardadas, r.tentativas_guardadas,
               r.tentativas_com_sucesso_guardadas
          from resumo_por_hora r
         where r.hora in (select hora from resumo_por_hora where hora < $1
                           group by hora having count(*) > 1
                                    or (sum(eventos_guardados) = 0 and sum(entregas_guardadas) = 0
                                        and sum(tentativas_guardadas) = 0 and sum(tentativas_com_sucesso_guardadas) = 0)
                                    or max(eventos) > 0 or max(recusados) > 0 or max(entregas_concluidas) > 0
                                    or max(tentativas_com_falha) > 0)
         order by r.hora, r.fatia
           for update of r skip locked`,
  parameters: ['timestamptz'],
  columns: {
    hora: 'timestamptz',
    fatia: 'int4',
    eventos_guardados: 'int4',
    entregas_guardadas: 'int4',
    tentativas_guardadas: 'int4',
    tentativas_com_sucesso_guardadas: 'int4',
  },
});

/** Folds the slices locked ($1 hours, $2 slices, $3–$6 their stored counts) into each hour's lowest. */
export const RETENCAO_DOBRAR_HORAS = prismaStatement({
  name: 'retencao_dobrar_horas',
  text: `with travadas as (
          select * from unnest($1::timestamptz[], $2::int[], $3::int[], $4::int[], $5::int[], $6::int[])
                 as t(hora, fatia, n, m, x, y)
        ), somas as (
          select hora, min(fatia) as fatia, sum(n) as n, sum(m) as m, sum(x) as x, sum(y) as y from travadas group by hora
        ), apagadas as (
          delete from resumo_por_hora r using travadas t
           where r.hora = t.hora and r.fatia = t.fatia
             and not exists (select 1 from somas s where s.hora = t.hora and s.fatia = t.fatia
                                                      and (s.n <> 0 or s.m <> 0 or s.x <> 0 or s.y <> 0))
        )
        update resumo_por_hora r
           set eventos = 0, recusados = 0, entregas_concluidas = 0, tentativas_com_falha = 0,
               eventos_guardados = s.n, entregas_guardadas = s.m, tentativas_guardadas = s.x,
               tentativas_com_sucesso_guardadas = s.y
          from somas s
         where r.hora = s.hora and r.fatia = s.fatia and (s.n <> 0 or s.m <> 0 or s.x <> 0 or s.y <> 0)`,
  parameters: ['timestamptz[]', 'int4[]', 'int4[]', 'int4[]', 'int4[]', 'int4[]'],
  columns: {},
});

/** Folds the latency histograms of the hours from $1 to before $2 into slice 0; the rows folded away. */
export const RETENCAO_DOBRAR_LATENCIAS = prismaStatement<{ dobradas: number }>({
  name: 'retencao_dobrar_latencias',
  text: `with dobradas as (
        delete from resumo_latencia_por_hora
         where hora >= $1 and hora < $2 and fatia <> 0
        returning hora, balde, entregas
      ), somadas as (
        insert into resumo_latencia_por_hora (hora, fatia, balde, entregas)
        select hora, 0, balde, sum(entregas) from dobradas group by hora, balde order by hora, balde
        on conflict (hora, fatia, balde) do update
          set entregas = resumo_latencia_por_hora.entregas + excluded.entregas
      )
      select count(*)::int as dobradas from dobradas`,
  parameters: ['timestamptz', 'timestamptz'],
  columns: { dobradas: 'int4' },
});

/** Up to $2 idempotency keys created before $1. */
export const RETENCAO_CHAVES = prismaStatement({
  name: 'retencao_chaves',
  text: `delete from chave_de_idempotencia
         where (escopo, chave) in (select escopo, chave from chave_de_idempotencia where criada_em < $1 limit $2)`,
  parameters: ['timestamptz', 'int8'],
  columns: {},
});

/** Up to $2 refused publications received before $1, oldest first. */
export const RETENCAO_RECUSADOS = prismaStatement({
  name: 'retencao_recusados',
  text: `delete from evento_recusado
         where id in (select id from evento_recusado where recebido_em < $1 order by recebido_em limit $2)`,
  parameters: ['timestamptz', 'int8'],
  columns: {},
});

/** Up to $2 rows of the latency histograms of hours before $1. */
export const RETENCAO_LATENCIAS = prismaStatement({
  name: 'retencao_latencias',
  text: `delete from resumo_latencia_por_hora
         where (hora, fatia, balde) in (select hora, fatia, balde from resumo_latencia_por_hora
                                         where hora < $1 limit $2)`,
  parameters: ['timestamptz', 'int8'],
  columns: {},
});

/** Up to $2 of the destinations' minutes before $1. */
export const RETENCAO_MINUTOS = prismaStatement({
  name: 'retencao_minutos',
  text: `delete from destino_minuto
         where (destino_id, minuto) in (select destino_id, minuto from destino_minuto
                                         where minuto < $1 limit $2)`,
  parameters: ['timestamptz', 'int8'],
  columns: {},
});
