import type { Broker, Channel } from '@hub/broker';
import { ERROR_QUEUE_HEADERS, EXCHANGES, QUEUES, type TrabalhoDeEntrega } from '@hub/contracts';
import type { Logger } from '@hub/log';
import type { Db } from '../../db';
import type { Situacao } from '../eventos/eventos.schemas';
import { trabalhosDasEntregas } from '../entregas/trabalho';
import {
  assentarAcks,
  copiarNaFilaDeErro,
  entregaIdDe,
  lerMensagens,
  type Mensagem,
  travaDaFilaDeErro,
} from './fila-de-erro';

/** What a pass found and fixed (POST /fila/erro/conciliar). */
export interface ResultadoDaConciliacao {
  mensagens_examinadas: number;
  /** messages whose delivery is in fila_de_erro, put back in the queue (a confirmed copy, then the original acked) */
  mensagens_mantidas: number;
  /** removed: the delivery no longer exists (retention) */
  removidas_sem_entrega: number;
  /** removed: the delivery left fila_de_erro (reprocessed, resent, concluded, cancelled) */
  removidas_fora_da_fila_de_erro: number;
  /** removed: a second message of a delivery already kept */
  removidas_duplicadas: number;
  /** poison jobs (dead-lettered by the work queue's delivery limit) whose delivery had stood still: now fila_de_erro */
  entregas_marcadas_fila_de_erro: number;
  /** poison jobs whose delivery moved recently: kept as they are and looked at again on the next pass */
  mensagens_em_espera: number;
  /** messages whose body is not a delivery job: kept, for an operator to look at */
  mensagens_ilegiveis: number;
  /** deliveries in fila_de_erro that had no message: their job rebuilt from the database and published */
  entregas_republicadas: number;
  iniciada_em: string;
  concluida_em: string;
}

/** The agreement at rest between the error queue and the deliveries in fila_de_erro (nothing changed by looking). */
export interface Concordancia {
  concordam: boolean;
  entregas_na_fila_de_erro: number;
  mensagens: number;
  /** deliveries in fila_de_erro with no message */
  faltando: string[];
  /** messages whose delivery is not in fila_de_erro (or does not exist) */
  sobrando: string[];
  /** deliveries with more than one message */
  duplicadas: string[];
  mensagens_ilegiveis: number;
  /** the delivery id of every message, sorted (one per message) */
  ids_das_mensagens: string[];
}

export interface ConciliacaoDeps {
  db: Db;
  broker: Broker;
  logger: Logger;
  /**
   * A delivery still pendente/em_andamento/aguardando_nova_tentativa whose job the work queue
   * dead-lettered as poison is marked fila_de_erro once it has not moved for this long.
   */
  paradaMs?: number;
  /** Messages read and decided together. */
  lote?: number;
  relogio?: () => Date;
}

/**
 * When the work queue dead-lettered this job for its delivery limit (a job that crashed its worker
 * again and again), the instant it happened; undefined for the jobs the worker put here itself.
 */
function envenenadaEm(mensagem: Mensagem): Date | undefined {
  const headers = mensagem.properties.headers ?? {};
  const mortes = (headers['x-death'] as { reason?: unknown; time?: unknown }[] | undefined) ?? [];
  const morte = mortes.find((m) => String(m.reason) === 'delivery_limit');
  if (!morte && headers[ERROR_QUEUE_HEADERS.motivo] !== 'limite_de_entregas') return undefined;
  const time = morte?.time as number | Date | { value?: number } | undefined;
  if (time instanceof Date) return time;
  if (typeof time === 'number') return new Date(time * 1000);
  if (time && typeof time === 'object' && typeof time.value === 'number') return new Date(time.value * 1000);
  return new Date(0);
}

/**
 * Makes the error queue agree one to one with the deliveries in fila_de_erro (architecture §5), the
 * database being the source of truth. One pass at a time across every hub-api (a PostgreSQL
 * advisory lock). It reads each message that was in the queue when it started, without auto-ack:
 * a message to remove is acked; a message to keep is published again with a confirm and only then
 * acked (no requeue, so no delivery count grows and nothing is lost if the pass dies: an unacked
 * message returns to the queue, a copy without its ack is a duplicate the next pass removes).
 * Then every delivery in fila_de_erro left without a message gets its job rebuilt from the
 * database and published to the error exchange with a confirm.
 */
export function conciliacaoDaFilaDeErro(deps: ConciliacaoDeps) {
  const { db, broker, logger } = deps;
  const paradaMs = deps.paradaMs ?? 5 * 60_000;
  const lote = deps.lote ?? 200;
  const relogio = deps.relogio ?? (() => new Date());

  const comTrava = travaDaFilaDeErro(db);
  const manter = (mensagem: Mensagem) => copiarNaFilaDeErro(broker, mensagem);

  async function decidirLote(
    canal: Channel,
    mensagens: Mensagem[],
    mantidas: Set<string>,
    r: ResultadoDaConciliacao,
    agora: Date,
  ): Promise<void> {
    const ids = [...new Set(mensagens.map(entregaIdDe).filter((id): id is string => id !== undefined))];
    const linhas = ids.length
      ? await db.$queryRaw<{ id: string; situacao: Situacao; atualizada_em: Date }[]>`
          select id::text, situacao, atualizada_em from entrega where id = any(${ids}::uuid[])`
      : [];
    const entregas = new Map(linhas.map((l) => [l.id, l]));
    const guardar: Mensagem[] = [];
    const remover: Mensagem[] = [];
    for (const mensagem of mensagens) {
      const id = entregaIdDe(mensagem);
      const entrega = id ? entregas.get(id) : undefined;
      if (!id) {
        r.mensagens_ilegiveis += 1;
        guardar.push(mensagem);
      } else if (!entrega) {
        r.removidas_sem_entrega += 1;
        remover.push(mensagem);
      } else if (mantidas.has(id)) {
        r.removidas_duplicadas += 1;
        remover.push(mensagem);
      } else if (entrega.situacao === 'fila_de_erro') {
        mantidas.add(id);
        r.mensagens_mantidas += 1;
        guardar.push(mensagem);
      } else if (entrega.situacao === 'concluida' || entrega.situacao === 'cancelada') {
        r.removidas_fora_da_fila_de_erro += 1;
        remover.push(mensagem);
      } else {
        // In the queue by its row. Its own job dead-lettered as poison while the row stood still
        // means the job is gone and nothing will move the delivery again: it belongs in fila_de_erro.
        const envenenada = envenenadaEm(mensagem);
        const moveuDepois = envenenada && entrega.atualizada_em.getTime() > envenenada.getTime() + 1_000;
        if (!envenenada || moveuDepois) {
          r.removidas_fora_da_fila_de_erro += 1;
          remover.push(mensagem);
        } else if (entrega.atualizada_em.getTime() < agora.getTime() - paradaMs) {
          const marcadas = await db.$executeRaw`
            update entrega
               set situacao = 'fila_de_erro', atualizada_em = ${agora},
                   ultimo_erro = 'the job was dead-lettered by the work queue after repeated deliveries (poison job)'
             where id = ${id}::uuid and situacao = ${entrega.situacao} and atualizada_em = ${entrega.atualizada_em}`;
          if (marcadas === 1) {
            r.entregas_marcadas_fila_de_erro += 1;
            r.mensagens_mantidas += 1;
            mantidas.add(id);
          } else r.mensagens_em_espera += 1;
          guardar.push(mensagem);
        } else {
          r.mensagens_em_espera += 1;
          guardar.push(mensagem);
        }
      }
    }
    await Promise.all(guardar.map(manter));
    // One ack for the whole batch: every message of it is settled now (removed, or copied and confirmed).
    const ultima = mensagens[mensagens.length - 1];
    if (ultima) canal.ack(ultima, true);
  }

  /** Deliveries in fila_de_erro since before the pass began that no message stood for. */
  async function republicarFaltantes(mantidas: Set<string>, inicio: Date): Promise<number> {
    let republicadas = 0;
    let cursor: { criada_em: Date; id: string } = {
      criada_em: new Date('0001-01-01T00:00:00.000Z'),
      id: '00000000-0000-0000-0000-000000000000',
    };
    for (;;) {
      const linhas = await db.$queryRaw<
        { id: string; criada_em: Date; tentativas_no_ciclo_atual: number; ultimo_erro: string | null }[]
      >`
        select e.id::text, e.criada_em, e.tentativas_no_ciclo_atual, e.ultimo_erro
          from entrega_nao_concluida c join entrega e on e.id = c.entrega_id
         where c.fase = 'fila_de_erro' and e.situacao = 'fila_de_erro' and e.atualizada_em < ${inicio}
           and (c.criada_em, c.entrega_id) > (${cursor.criada_em}, ${cursor.id}::uuid)
         order by c.criada_em, c.entrega_id limit 1000`;
      if (linhas.length === 0) return republicadas;
      cursor = linhas[linhas.length - 1]!;
      const faltantes = linhas.filter((l) => !mantidas.has(l.id));
      const trabalhos = await trabalhosDasEntregas(
        db,
        faltantes.map((l) => l.id),
      );
      await Promise.all(
        faltantes.map((l) => {
          const trabalho = trabalhos.get(l.id);
          return trabalho ? publicarNaFilaDeErro(trabalho, l.tentativas_no_ciclo_atual, l.ultimo_erro) : undefined;
        }),
      );
      republicadas += faltantes.filter((l) => trabalhos.has(l.id)).length;
    }
  }

  const publicarNaFilaDeErro = (trabalho: TrabalhoDeEntrega, tentativas: number, ultimoErro: string | null) =>
    broker.publish(EXCHANGES.entregasErro, '', Buffer.from(JSON.stringify(trabalho)), {
      messageId: trabalho.entrega_id,
      headers: {
        [ERROR_QUEUE_HEADERS.tentativas]: tentativas,
        [ERROR_QUEUE_HEADERS.ultimoErro]: (ultimoErro ?? '').slice(0, 500),
        [ERROR_QUEUE_HEADERS.motivo]: 'conciliacao',
      },
    });

  async function passar(): Promise<ResultadoDaConciliacao> {
    return comTrava(async () => {
      const inicio = relogio();
      const r: ResultadoDaConciliacao = {
        mensagens_examinadas: 0,
        mensagens_mantidas: 0,
        removidas_sem_entrega: 0,
        removidas_fora_da_fila_de_erro: 0,
        removidas_duplicadas: 0,
        entregas_marcadas_fila_de_erro: 0,
        mensagens_em_espera: 0,
        mensagens_ilegiveis: 0,
        entregas_republicadas: 0,
        iniciada_em: inicio.toISOString(),
        concluida_em: '',
      };
      const mantidas = new Set<string>();
      await broker.withChannel(async (canal) => {
        // Only what was there at the start: the kept copies go to the tail and are not read again.
        let restantes = (await canal.checkQueue(QUEUES.entregasErro)).messageCount;
        while (restantes > 0) {
          const mensagens = await lerMensagens(canal, QUEUES.entregasErro, Math.min(lote, restantes));
          if (mensagens.length === 0) break;
          restantes -= mensagens.length;
          r.mensagens_examinadas += mensagens.length;
          await decidirLote(canal, mensagens, mantidas, r, relogio());
        }
        await assentarAcks(canal, QUEUES.entregasErro);
      });
      r.entregas_republicadas = await republicarFaltantes(mantidas, inicio);
      r.concluida_em = relogio().toISOString();
      return r;
    });
  }

  let corrente: Promise<ResultadoDaConciliacao> | undefined;
  let outraDepois: Promise<ResultadoDaConciliacao> | undefined;

  const conciliacao = {
    /**
     * One pass that starts after this call (a pass under way when it is called may have read the
     * queue before the change that asked for it, so a second one is queued; callers meanwhile share it).
     */
    conciliar(): Promise<ResultadoDaConciliacao> {
      if (!corrente) {
        corrente = passar().finally(() => {
          corrente = undefined;
        });
        return corrente;
      }
      outraDepois ??= corrente
        .catch(() => undefined)
        .then(() => {
          outraDepois = undefined;
          return conciliacao.conciliar();
        });
      return outraDepois;
    },

    /** A pass in the background (after a resend or a reprocessing); a failure is logged, the next pass repairs. */
    agendar(): void {
      conciliacao
        .conciliar()
        .then((r) => logger.info({ conciliacao: r }, 'error queue reconciled'))
        .catch((error) => logger.error({ err: error }, 'error queue reconciliation failed'));
    },

    /** Waits for the passes under way or queued (a clean stop). */
    async parar(): Promise<void> {
      await outraDepois?.catch(() => undefined);
      await corrente?.catch(() => undefined);
    },

    /**
     * The check of the one-to-one agreement, at rest: reads every message (unacked, then returned
     * with a requeue, which the error queue allows since it has no delivery limit) and every
     * delivery in fila_de_erro, and compares. Serialised with the passes by the same lock.
     */
    verificar(): Promise<Concordancia> {
      return comTrava(async () => {
        const porEntrega = new Map<string, number>();
        let ilegiveis = 0;
        let mensagens = 0;
        await broker.withChannel(async (canal) => {
          const total = (await canal.checkQueue(QUEUES.entregasErro)).messageCount;
          const lidas = await lerMensagens(canal, QUEUES.entregasErro, total);
          mensagens = lidas.length;
          for (const mensagem of lidas) {
            const id = entregaIdDe(mensagem);
            if (id) porEntrega.set(id, (porEntrega.get(id) ?? 0) + 1);
            else ilegiveis += 1;
          }
          canal.nackAll(true);
        });
        const naFila = new Set(
          (await db.$queryRaw<{ id: string }[]>`select id::text from entrega where situacao = 'fila_de_erro'`).map(
            (l) => l.id,
          ),
        );
        const faltando = [...naFila].filter((id) => !porEntrega.has(id)).sort();
        const sobrando = [...porEntrega.keys()].filter((id) => !naFila.has(id)).sort();
        const duplicadas = [...porEntrega]
          .filter(([, n]) => n > 1)
          .map(([id]) => id)
          .sort();
        return {
          concordam: faltando.length + sobrando.length + duplicadas.length + ilegiveis === 0,
          entregas_na_fila_de_erro: naFila.size,
          mensagens,
          faltando,
          sobrando,
          duplicadas,
          mensagens_ilegiveis: ilegiveis,
          ids_das_mensagens: [...porEntrega].flatMap(([id, n]) => Array<string>(n).fill(id)).sort(),
        };
      });
    },
  };
  return conciliacao;
}
export type ConciliacaoDaFilaDeErro = ReturnType<typeof conciliacaoDaFilaDeErro>;
