import { Prisma } from '@hub/hub-data';
import { periodicJob } from '@hub/jobs';
import type { Logger } from '@hub/log';
import type { Db } from '../db';
import { SITUACOES_NA_FILA, type Situacao } from '../features/eventos/eventos.schemas';

/**
 * Deliveries not final: in the queue, or in the error queue, whose messages agree one to one with
 * them and which reprocessing takes back. An event with one of them is never erased.
 */
export const SITUACOES_NAO_FINAIS: readonly Situacao[] = [...SITUACOES_NA_FILA, 'fila_de_erro'];

const DIA_MS = 86_400_000;
const HORA_MS = 3_600_000;
/** Idempotency keys answer repeats for 24 h (architecture §5); the summary reads 24 h, kept twice that. */
const CHAVES_MS = 24 * HORA_MS;
const RESUMO_MS = 48 * HORA_MS;

export interface RetencaoOptions {
  db: Db;
  logger: Logger;
  /** How long refused publications are kept (HUB_RECUSADOS_RETENCAO). */
  recusadosMs: number;
  /** Pause between passes (HUB_RETENCAO_INTERVALO). */
  intervaloMs: number;
  /** Events erased per statement: each batch is its own short transaction. */
  lote?: number;
  /** The clock; tests drive it instead of waiting. */
  relogio?: () => Date;
}

export interface Apagados {
  eventos: number;
  outbox: number;
  chaves: number;
  recusados: number;
  /** Rows of resumo_por_hora and resumo_latencia_por_hora erased or folded away. */
  horas: number;
  /** Rows of destino_minuto (a destination's attempts of one minute) past 48 h. */
  minutos: number;
}

/**
 * Erases what outlived its retention (contract §3, §6.6): events older than their type's
 * retencao_em_dias whose deliveries are all final (concluida or cancelada), with their deliveries
 * and attempts (foreign-key cascade) and the outbox rows of those deliveries; an event with a
 * delivery still in the queue or in the error queue waits until it is concluded, reprocessed or
 * cancelled; idempotency keys past 24 h; refused publications past their configured time;
 * destinations' minutes past 48 h; summary tallies past 48 h (keeping each old hour's counts of stored events, deliveries and attempts in one row) and the
 * latency histograms of those hours, whose younger ones it folds into one slice an hour once
 * no worker writes them (`horas` counts all of these rows). Everything goes in small batches, each one
 * statement (its own transaction), so no lock is held for long and publication never waits behind a purge.
 */
export function retencaoJob(options: RetencaoOptions) {
  const { db, logger } = options;
  const lote = options.lote ?? 1_000;
  const relogio = options.relogio ?? (() => new Date());

  /** Repeats a batch until it erases less than a full one. */
  async function emLotes(apagar: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      if (job.stopped) return total;
      const apagados = await apagar();
      total += apagados;
      if (apagados < lote) return total;
    }
  }

  async function eventosDoTipo(tipoId: string, limite: Date): Promise<{ eventos: number; outbox: number }> {
    let outbox = 0;
    // Where the pass has walked to in the type's events, oldest first: each batch starts after the
    // last candidate of the one before, so the events an expired day must keep (a delivery not
    // final) and the index entries of the rows just erased are walked once per pass, not once per
    // batch. An event passed over (kept, or held by another pass) is looked at again next pass.
    let depois: { recebidoEm: Date; id: string } | undefined;
    const eventos = await emLotes(async () => {
      // The oldest events of the type through evento_tipo whose deliveries are all final; a row
      // another pass holds is skipped. Their deliveries are then locked and read again: one resent
      // meanwhile (concluida back to pendente, committed after this statement's snapshot or still
      // uncommitted) keeps its event. One statement: the outbox rows of the batch's deliveries go
      // with it, then the events (whose deliveries and attempts the cascade takes). The cascade's
      // deletes of entrega, one per event, run entrega's statement-level delete trigger (the copies of
      // entrega_nao_concluida, the hour's entregas_guardadas: migrations 018 and 023) once for this
      // whole statement, over every delivery it took: PostgreSQL gathers the rows of one statement's
      // foreign-key actions into one transition table per table (total.test.ts of entregas logs it).
      // Those triggers upsert the hours of resumo_por_hora on the transaction's slice: evento's and
      // entrega's the events' hours, then tentativa's the hours the attempts started in, later than
      // their event's and so possibly after another event's of the batch: out of hour order, the
      // batch could hold a later hour's slice and wait for an earlier one, and meet in a cycle
      // (40P01) another instance's batch on the same slice (one transaction in 16) or any writer that
      // locks those hours in order. So `horas` first locks every hour the triggers will upsert, in hour
      // order (an upsert that changes nothing, or an empty row), before the deletes' triggers run at
      // the end of the statement; they then update rows the batch already holds.
      const naoFinais = [...SITUACOES_NAO_FINAIS];
      const desde = depois
        ? Prisma.sql`and (ev.recebido_em, ev.id) > (${depois.recebidoEm}, ${depois.id}::uuid)`
        : Prisma.empty;
      const [linha] = await db.$queryRaw<
        [{ eventos: number; outbox: number; ultimo_em: Date | null; ultimo_id: string | null }]
      >`
        with candidatos as materialized (
          select ev.id, ev.recebido_em from evento ev
           where ev.tipo_de_evento_id = ${tipoId}::uuid and ev.recebido_em < ${limite} ${desde}
             and not exists (select 1 from entrega en where en.evento_id = ev.id and en.situacao = any(${naoFinais}::text[]))
           order by ev.recebido_em, ev.id
           limit ${lote}
             for update skip locked
        ), travadas as materialized (
          select en.id, en.evento_id, en.situacao, en.criada_em from entrega en
           where en.evento_id in (select id from candidatos)
             for update
        ), lote as (
          select c.id from candidatos c
           where not exists (select 1 from travadas t where t.evento_id = c.id and t.situacao = any(${naoFinais}::text[]))
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
               (select recebido_em from ultimo) as ultimo_em, (select id::text from ultimo) as ultimo_id`;
      outbox += linha.outbox;
      if (linha.ultimo_em && linha.ultimo_id) depois = { recebidoEm: linha.ultimo_em, id: linha.ultimo_id };
      return linha.eventos;
    });
    return { eventos, outbox };
  }

  /**
   * The summary's tallies of hours past 48 h are no longer read, but the stored counts of the hour
   * (eventos_guardados, entregas_guardadas, tentativas_guardadas and tentativas_com_sucesso_guardadas:
   * the totals of GET /evento, GET /entrega and GET /tentativa, the deep pages of GET /evento and
   * GET /tentativa) must stay exact. So each such hour's slices are folded into one row, in one
   * transaction: its lowest slice keeps the sums (the other tallies zeroed), the others are deleted,
   * and an hour that holds none of them any more keeps no row. An hour already folded (one row, no
   * tally) is left alone. Returns the rows folded away (every row locked here).
   *
   * The rows are locked first, in (hora, fatia) order, and their counts read as they are once
   * locked (READ COMMITTED: a slice a trigger updated meanwhile is read at its committed value), so
   * the hours' sums do not change. A row another transaction holds is skipped (SKIP LOCKED), never
   * waited for: the pass folds the hour's other slices into the lowest of those it locked (the hour's
   * sum is the same) and the skipped one at a later pass. Another instance's retention, or an
   * operator, deleting events of these hours upserts their slices in its transaction, on one slice
   * (`fatia_da_transacao()`), but not in hour order: evento's and entrega's triggers upsert the
   * events' hours, then tentativa's the hours its attempts started in, later than their event's and
   * possibly after another event's of the batch; so that transaction could hold a later hour's slice
   * and wait for an earlier one this pass held while it waited for the later one (40P01: one of the
   * two rolled back, total.test.ts of tentativas reproduces it). A pass that waits for nothing is in
   * no such cycle, whatever order the others lock in. And the folded row is an update of a row
   * already locked, not an insert: an insert into a slice would wait for another transaction's
   * uncommitted insert of it.
   */
  async function compactarHoras(antesDe: Date): Promise<number> {
    return db.$transaction(async (tx) => {
      const travadas = await tx.$queryRaw<
        {
          hora: Date;
          fatia: number;
          eventos_guardados: number;
          entregas_guardadas: number;
          tentativas_guardadas: number;
          tentativas_com_sucesso_guardadas: number;
        }[]
      >`
        select r.hora, r.fatia, r.eventos_guardados, r.entregas_guardadas, r.tentativas_guardadas,
               r.tentativas_com_sucesso_guardadas
          from resumo_por_hora r
         where r.hora in (select hora from resumo_por_hora where hora < ${antesDe}
                           group by hora having count(*) > 1
                                    or (sum(eventos_guardados) = 0 and sum(entregas_guardadas) = 0
                                        and sum(tentativas_guardadas) = 0 and sum(tentativas_com_sucesso_guardadas) = 0)
                                    or max(eventos) > 0 or max(recusados) > 0 or max(entregas_concluidas) > 0
                                    or max(tentativas_com_falha) > 0)
         order by r.hora, r.fatia
           for update of r skip locked`;
      if (travadas.length === 0) return 0;
      await tx.$executeRaw`
        with travadas as (
          select * from unnest(${travadas.map((r) => r.hora)}::timestamptz[], ${travadas.map((r) => r.fatia)}::int[],
                               ${travadas.map((r) => r.eventos_guardados)}::int[],
                               ${travadas.map((r) => r.entregas_guardadas)}::int[],
                               ${travadas.map((r) => r.tentativas_guardadas)}::int[],
                               ${travadas.map((r) => r.tentativas_com_sucesso_guardadas)}::int[]) as t(hora, fatia, n, m, x, y)
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
         where r.hora = s.hora and r.fatia = s.fatia and (s.n <> 0 or s.m <> 0 or s.x <> 0 or s.y <> 0)`;
      return travadas.length;
    });
  }

  /**
   * The latency histograms of the hours that ended over an hour before `agora`, folded into slice 0:
   * a summary read then sums one row per bucket for those hours instead of one per slice and bucket
   * (16 times fewer in a busy hour). No worker writes to those hours any more (a batch counts in the
   * hour of the moment it records, and a statement does not last an hour), so the fold never waits
   * for one. One statement: what it deletes is what it adds back. Returns the rows folded away.
   */
  async function dobrarLatencias(agora: number): Promise<number> {
    const antesDe = new Date(Math.floor(agora / HORA_MS) * HORA_MS - HORA_MS);
    const [linha] = await db.$queryRaw<[{ dobradas: number }]>`
      with dobradas as (
        delete from resumo_latencia_por_hora
         where hora >= ${new Date(agora - RESUMO_MS)} and hora < ${antesDe} and fatia <> 0
        returning hora, balde, entregas
      ), somadas as (
        insert into resumo_latencia_por_hora (hora, fatia, balde, entregas)
        select hora, 0, balde, sum(entregas) from dobradas group by hora, balde order by hora, balde
        on conflict (hora, fatia, balde) do update
          set entregas = resumo_latencia_por_hora.entregas + excluded.entregas
      )
      select count(*)::int as dobradas from dobradas`;
    return linha.dobradas;
  }

  async function passar(): Promise<Apagados> {
    const agora = relogio().getTime();
    const apagados: Apagados = { eventos: 0, outbox: 0, chaves: 0, recusados: 0, horas: 0, minutos: 0 };
    const tipos = await db.tipoDeEvento.findMany({ select: { id: true, retencaoEmDias: true } });
    for (const tipo of tipos) {
      const { eventos, outbox } = await eventosDoTipo(tipo.id, new Date(agora - tipo.retencaoEmDias * DIA_MS));
      apagados.eventos += eventos;
      apagados.outbox += outbox;
    }
    const chaves = new Date(agora - CHAVES_MS);
    apagados.chaves = await emLotes(
      () => db.$executeRaw`
        delete from chave_de_idempotencia
         where (escopo, chave) in (select escopo, chave from chave_de_idempotencia where criada_em < ${chaves} limit ${lote})`,
    );
    const recusados = new Date(agora - options.recusadosMs);
    apagados.recusados = await emLotes(
      () => db.$executeRaw`
        delete from evento_recusado
         where id in (select id from evento_recusado where recebido_em < ${recusados} order by recebido_em limit ${lote})`,
    );
    apagados.horas = await compactarHoras(new Date(agora - RESUMO_MS));
    // The latency histograms of those hours are read by nothing else: erased, a batch at a time.
    apagados.horas += await emLotes(
      () => db.$executeRaw`
        delete from resumo_latencia_por_hora
         where (hora, fatia, balde) in (select hora, fatia, balde from resumo_latencia_por_hora
                                         where hora < ${new Date(agora - RESUMO_MS)} limit ${lote})`,
    );
    apagados.horas += await dobrarLatencias(agora);
    // The destinations' minutes are read for the last 24 h at most (GET /destino, a subscription's
    // health): kept 48 h, like the hourly tallies, then erased a batch at a time.
    apagados.minutos = await emLotes(
      () => db.$executeRaw`
        delete from destino_minuto
         where (destino_id, minuto) in (select destino_id, minuto from destino_minuto
                                         where minuto < ${new Date(agora - RESUMO_MS)} limit ${lote})`,
    );
    return apagados;
  }

  // Stopped, the pass under way ends after its current batch (emLotes) and stop() waits for it.
  const job = periodicJob({
    name: 'retention',
    logger,
    pauseMs: options.intervaloMs,
    /** One whole pass: what it erased. */
    async run(): Promise<Apagados> {
      const apagados = await passar();
      if (Object.values(apagados).some((n) => n > 0)) logger.info({ apagados }, 'retention: expired rows erased');
      return apagados;
    },
  });
  return job;
}
export type RetencaoJob = ReturnType<typeof retencaoJob>;
