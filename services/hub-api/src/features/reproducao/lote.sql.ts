import { prismaStatement } from '@hub/database';
import type { Situacao } from '../eventos/eventos.schemas';
import type { EventoDoLote } from './classificacao';
import type { AssinaturaParaLote } from './lote.repository';

// A replay batch's statements of fixed text (lote.repository.ts), run on Prisma inside the batch's
// transaction, checked by publicacao/sql.test.ts.

/** Up to $1 replays not yet final, oldest first. */
export const REPRODUCAO_ABERTAS = prismaStatement<{ id: string }>({
  name: 'reproducao_abertas',
  text: `select id::text from reproducao where situacao in ('pendente', 'em_andamento')
         order by criada_em, id limit $1`,
  parameters: ['int8'],
  columns: { id: 'text' },
});

/** Replay $1, locked, if still open and no other runner holds it. */
export const REPRODUCAO_REIVINDICAR = prismaStatement<{ id: string }>({
  name: 'reproducao_reivindicar',
  text: `select id::text from reproducao where id = $1::uuid and situacao in ('pendente', 'em_andamento')
           for update skip locked`,
  parameters: ['uuid'],
  columns: { id: 'text' },
});

/** How many of deliveries $1 are still in the queue. */
export const REPRODUCAO_AINDA_NA_FILA = prismaStatement<{ n: number }>({
  name: 'reproducao_ainda_na_fila',
  text: `select count(*)::int as n from entrega
         where id = any($1::uuid[]) and situacao in ('pendente', 'em_andamento', 'aguardando_nova_tentativa')`,
  parameters: ['uuid[]'],
  columns: { n: 'int4' },
});

/** The transaction's lock of a subscription's replays ($1: `reproducao:<subscription id>`). */
export const REPRODUCAO_TRAVAR_ASSINATURA = prismaStatement({
  name: 'reproducao_travar_assinatura',
  text: 'select from pg_advisory_xact_lock(hashtextextended($1, 0))',
  parameters: ['text'],
  columns: {},
});

/** Subscription $1 as a batch reads it, its filter as stored. */
export const REPRODUCAO_ASSINATURA = prismaStatement<Omit<AssinaturaParaLote, 'filtro'> & { filtro: unknown }>({
  name: 'reproducao_assinatura',
  text: `select a.id::text, a.aplicativo_assinante_id::text as "aplicativoAssinanteId",
               a.tipo_de_evento_id::text as "tipoDeEventoId", t.nome as "tipoNome",
               a.versao_do_esquema as "versaoDoEsquema", a.url_de_destino as "urlDeDestino",
               a.maximo_de_tentativas as "maximoDeTentativas", a.entrega_ordenada as "entregaOrdenada",
               (a.ativa and a.excluida_em is null) as recebe, a.filtro
          from assinatura a join tipo_de_evento t on t.id = a.tipo_de_evento_id
         where a.id = $1::uuid`,
  parameters: ['uuid'],
  columns: {
    id: 'text',
    aplicativoAssinanteId: 'text',
    tipoDeEventoId: 'text',
    tipoNome: 'text',
    versaoDoEsquema: 'int4',
    urlDeDestino: 'text',
    maximoDeTentativas: 'int4',
    entregaOrdenada: 'bool',
    recebe: 'bool',
    filtro: 'jsonb',
  },
});

/**
 * Up to $9 events of type $3 version $4 received between $5 and $6, after ($7, $8) by (recebido_em,
 * id), each with its latest delivery to subscription $2; their dados only when $1 (a filter).
 */
export const REPRODUCAO_PROXIMOS = prismaStatement<
  Omit<EventoDoLote, 'entrega'> & { entrega_id: string | null; entrega_situacao: Situacao | null }
>({
  name: 'reproducao_proximos',
  text: `select e.id::text, e.entidade_id as "entidadeId", e.ocorrido_em as "ocorridoEm", e.recebido_em as "recebidoEm",
               e.aplicativo_publicador_id::text as "aplicativoPublicadorId", e.publicado_pelo_email is not null as teste,
               case when $1 then e.dados::text end as dados,
               en.id::text as entrega_id, en.situacao as entrega_situacao
          from evento e
          left join lateral (
            select x.id, x.situacao from entrega x where x.evento_id = e.id and x.assinatura_id = $2::uuid
             order by x.criada_em desc, x.id desc limit 1
          ) en on true
         where e.tipo_de_evento_id = $3::uuid and e.versao_do_esquema = $4
           and e.recebido_em between $5 and $6
           and (e.recebido_em, e.id) > ($7, $8::uuid)
         order by e.recebido_em, e.id
         limit $9`,
  parameters: ['bool', 'uuid', 'uuid', 'int4', 'timestamptz', 'timestamptz', 'timestamptz', 'uuid', 'int8'],
  columns: {
    id: 'text',
    entidadeId: 'text',
    ocorridoEm: 'timestamptz',
    recebidoEm: 'timestamptz',
    aplicativoPublicadorId: 'text',
    teste: 'bool',
    dados: 'text',
    entrega_id: 'text',
    entrega_situacao: 'text',
  },
});

/** Locks deliveries $1 and answers those whose cycle is over, with their state. */
export const REPRODUCAO_TRAVAR_FINAIS = prismaStatement<{ id: string; situacao: Situacao }>({
  name: 'reproducao_travar_finais',
  text: `select id::text, situacao from entrega where id = any($1::uuid[])
               and situacao in ('concluida', 'fila_de_erro', 'cancelada')
             order by id for update`,
  parameters: ['uuid[]'],
  columns: { id: 'text', situacao: 'text' },
});

/**
 * Writes a delivery of each event, in the batch's order ($1 ids, $2 events, $3 received, $4
 * entities), to subscription $6 ($5: ordered; $7–$11 its application, type, version, url and
 * attempts), due at $12: their ids and whether each waits its turn.
 */
export const REPRODUCAO_CRIAR_ENTREGAS = prismaStatement<{ id: string; em_espera: boolean }>({
  name: 'reproducao_criar_entregas',
  text: `with novas as (
          select * from unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[])
                   with ordinality as n(id, evento_id, recebido, entidade_id, ordem)
        ), ordenadas as (
          select id, entidade_id, row_number() over (partition by entidade_id order by ordem) as r
            from novas where $5
        ), contagem as (
          select entidade_id, count(*) as k from ordenadas group by entidade_id
        ), contadores as (
          insert into sequencia_de_entidade as s (assinatura_id, entidade_id, ultima, pronta)
          select $6::uuid, entidade_id, k, 1 from contagem order by entidade_id
          on conflict (assinatura_id, entidade_id) do update set ultima = s.ultima + excluded.ultima
          returning s.entidade_id, s.ultima, s.pronta
        ), numeradas as (
          select o.id, c.ultima - g.k + o.r as sequencia, c.pronta
            from ordenadas o join contagem g using (entidade_id) join contadores c using (entidade_id)
        )
        insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id, aplicativo_assinante_id,
                             tipo_de_evento_id, versao_do_esquema, url_de_destino, maximo_de_tentativas,
                             situacao, proxima_tentativa_em, criada_em, atualizada_em, sequencia, em_espera)
        select n.id, n.evento_id, n.recebido, n.entidade_id, $6::uuid, $7::uuid,
               $8::uuid, $9, $10, $11,
               'pendente', $12, $12, $12, q.sequencia, coalesce(q.sequencia <> q.pronta, false)
          from novas n left join numeradas q on q.id = n.id
         order by n.ordem
        returning id::text, em_espera`,
  parameters: [
    ...['uuid[]', 'uuid[]', 'timestamptz[]', 'text[]', 'bool', 'uuid'],
    ...['uuid', 'uuid', 'int4', 'text', 'int4', 'timestamptz'],
  ],
  columns: { id: 'text', em_espera: 'bool' },
});

/** The events of type $1 version $2 received between $3 and $4, counted up to $5 at most (reproducao.repository.ts). */
export const REPRODUCAO_CONTAR_EVENTOS = prismaStatement<{ n: number }>({
  name: 'reproducao_contar_eventos',
  text: `select count(*)::int as n from (
          select 1 from evento
           where tipo_de_evento_id = $1::uuid and versao_do_esquema = $2
             and recebido_em between $3 and $4
           limit $5) as e`,
  parameters: ['uuid', 'int4', 'timestamptz', 'timestamptz', 'int8'],
  columns: { n: 'int4' },
});
