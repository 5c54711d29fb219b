import type { Reproducao } from '@hub/hub-data';
import type { DbClient, Tx } from '../../db';
import { compilarFiltroGuardado, type Predicado } from '../assinaturas/filtro';
import type { Situacao } from '../eventos/eventos.schemas';
import type { EventoDoLote } from './classificacao';

/** The subscription as a batch reads it, under the replay's lock of it. */
export interface AssinaturaParaLote {
  id: string;
  aplicativoAssinanteId: string;
  tipoDeEventoId: string;
  tipoNome: string;
  versaoDoEsquema: number;
  urlDeDestino: string;
  maximoDeTentativas: number;
  entregaOrdenada: boolean;
  recebe: boolean;
  filtro: Predicado | null;
}

const INICIO = { recebidoEm: new Date('0001-01-01T00:00:00.000Z'), id: '00000000-0000-0000-0000-000000000000' };

/**
 * The statements of a replay's batch (docs/decisions/replay-engine.md), each inside the batch's
 * transaction. New deliveries are written as publication writes them (publicacao.repository.ts,
 * ENTREGAS): pendente, due now, the subscription's url and attempts; an ordered subscription's get the
 * next sequencia of their entity's chain (the counter row advanced once per entity, in key order as
 * publication and liberar_seguintes lock them), and each one whose number is not the chain's turn
 * waits (em_espera, no job) for liberar_seguintes to release it.
 */
export function loteRepository(db: DbClient) {
  return {
    /** Replays not yet final, oldest first. */
    async abertas(limite: number): Promise<string[]> {
      const linhas = await db.$queryRaw<{ id: string }[]>`
        select id::text from reproducao where situacao in ('pendente', 'em_andamento')
         order by criada_em, id limit ${limite}`;
      return linhas.map((l) => l.id);
    },

    /** The replay, locked until the batch commits, if still open and no other runner holds it. */
    async reivindicar(id: string, tx: Tx): Promise<Reproducao | undefined> {
      const [linha] = await tx.$queryRaw<{ id: string }[]>`
        select id::text from reproducao where id = ${id}::uuid and situacao in ('pendente', 'em_andamento')
           for update skip locked`;
      return linha ? await tx.reproducao.findUniqueOrThrow({ where: { id } }) : undefined;
    },

    /** How many of these deliveries are still in the queue (a job in flight, a retry due, or waiting their turn). */
    async aindaNaFila(ids: readonly string[], tx: Tx): Promise<number> {
      if (ids.length === 0) return 0;
      const [linha] = await tx.$queryRaw<[{ n: number }]>`
        select count(*)::int as n from entrega
         where id = any(${ids}::uuid[]) and situacao in ('pendente', 'em_andamento', 'aguardando_nova_tentativa')`;
      return linha.n;
    },

    /**
     * The subscription, with a transaction lock of its own: two replays of one subscription (on two
     * hub-api) never write its batches at once, so neither creates a delivery the other just did.
     */
    async travarAssinatura(id: string, tx: Tx): Promise<AssinaturaParaLote | undefined> {
      await tx.$executeRaw`select pg_advisory_xact_lock(hashtextextended(${`reproducao:${id}`}, 0))`;
      const [a] = await tx.$queryRaw<(Omit<AssinaturaParaLote, 'filtro'> & { filtro: unknown })[]>`
        select a.id::text, a.aplicativo_assinante_id::text as "aplicativoAssinanteId",
               a.tipo_de_evento_id::text as "tipoDeEventoId", t.nome as "tipoNome",
               a.versao_do_esquema as "versaoDoEsquema", a.url_de_destino as "urlDeDestino",
               a.maximo_de_tentativas as "maximoDeTentativas", a.entrega_ordenada as "entregaOrdenada",
               (a.ativa and a.excluida_em is null) as recebe, a.filtro
          from assinatura a join tipo_de_evento t on t.id = a.tipo_de_evento_id
         where a.id = ${id}::uuid`;
      return a ? { ...a, filtro: compilarFiltroGuardado(a.filtro) } : undefined;
    },

    /** The next events of the range after the cursor, by (recebido_em, id), each with its latest delivery to the subscription. */
    async proximos(r: Reproducao, a: AssinaturaParaLote, lote: number, tx: Tx): Promise<EventoDoLote[]> {
      const cursor = { recebidoEm: r.cursorRecebidoEm ?? INICIO.recebidoEm, id: r.cursorEventoId ?? INICIO.id };
      const linhas = await tx.$queryRaw<
        (Omit<EventoDoLote, 'entrega'> & { entrega_id: string | null; entrega_situacao: Situacao | null })[]
      >`
        select e.id::text, e.entidade_id as "entidadeId", e.ocorrido_em as "ocorridoEm", e.recebido_em as "recebidoEm",
               e.aplicativo_publicador_id::text as "aplicativoPublicadorId", e.publicado_pelo_email is not null as teste,
               case when ${a.filtro !== null} then e.dados::text end as dados,
               en.id::text as entrega_id, en.situacao as entrega_situacao
          from evento e
          left join lateral (
            select x.id, x.situacao from entrega x where x.evento_id = e.id and x.assinatura_id = ${a.id}::uuid
             order by x.criada_em desc, x.id desc limit 1
          ) en on true
         where e.tipo_de_evento_id = ${a.tipoDeEventoId}::uuid and e.versao_do_esquema = ${a.versaoDoEsquema}
           and e.recebido_em between ${r.desde} and ${r.ate}
           and (e.recebido_em, e.id) > (${cursor.recebidoEm}, ${cursor.id}::uuid)
         order by e.recebido_em, e.id
         limit ${lote}`;
      return linhas.map(({ entrega_id, entrega_situacao, ...e }) => ({
        ...e,
        entrega: entrega_id && entrega_situacao ? { id: entrega_id, situacao: entrega_situacao } : null,
      }));
    },

    /** Locks these deliveries and answers those whose cycle is over (a new one may start), with their state. */
    travarFinais: (ids: readonly string[], tx: Tx) =>
      ids.length === 0
        ? Promise.resolve([])
        : tx.$queryRaw<{ id: string; situacao: Situacao }[]>`
            select id::text, situacao from entrega where id = any(${ids}::uuid[])
               and situacao in ('concluida', 'fila_de_erro', 'cancelada')
             order by id for update`,

    /** Writes a delivery of each event (in the batch's order): their ids and whether each waits its turn. */
    async criarEntregas(
      a: AssinaturaParaLote,
      novas: { id: string; evento: EventoDoLote }[],
      agora: Date,
      tx: Tx,
    ): Promise<{ id: string; em_espera: boolean }[]> {
      if (novas.length === 0) return [];
      const ids = novas.map((n) => n.id);
      const eventos = novas.map((n) => n.evento.id);
      const recebidos = novas.map((n) => n.evento.recebidoEm.toISOString());
      const entidades = novas.map((n) => n.evento.entidadeId);
      return tx.$queryRaw<{ id: string; em_espera: boolean }[]>`
        with novas as (
          select * from unnest(${ids}::uuid[], ${eventos}::uuid[], ${recebidos}::timestamptz[], ${entidades}::text[])
                   with ordinality as n(id, evento_id, recebido, entidade_id, ordem)
        ), ordenadas as (
          select id, entidade_id, row_number() over (partition by entidade_id order by ordem) as r
            from novas where ${a.entregaOrdenada}
        ), contagem as (
          select entidade_id, count(*) as k from ordenadas group by entidade_id
        ), contadores as (
          insert into sequencia_de_entidade as s (assinatura_id, entidade_id, ultima, pronta)
          select ${a.id}::uuid, entidade_id, k, 1 from contagem order by entidade_id
          on conflict (assinatura_id, entidade_id) do update set ultima = s.ultima + excluded.ultima
          returning s.entidade_id, s.ultima, s.pronta
        ), numeradas as (
          select o.id, c.ultima - g.k + o.r as sequencia, c.pronta
            from ordenadas o join contagem g using (entidade_id) join contadores c using (entidade_id)
        )
        insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id, aplicativo_assinante_id,
                             tipo_de_evento_id, versao_do_esquema, url_de_destino, maximo_de_tentativas,
                             situacao, proxima_tentativa_em, criada_em, atualizada_em, sequencia, em_espera)
        select n.id, n.evento_id, n.recebido, n.entidade_id, ${a.id}::uuid, ${a.aplicativoAssinanteId}::uuid,
               ${a.tipoDeEventoId}::uuid, ${a.versaoDoEsquema}, ${a.urlDeDestino}, ${a.maximoDeTentativas},
               'pendente', ${agora}, ${agora}, ${agora}, q.sequencia, coalesce(q.sequencia <> q.pronta, false)
          from novas n left join numeradas q on q.id = n.id
         order by n.ordem
        returning id::text, em_espera`;
    },
  };
}
export type LoteRepository = ReturnType<typeof loteRepository>;
