import { setTimeout as pausa } from 'node:timers/promises';
import type { Broker, Channel } from '@hub/broker';
import { ERROR_QUEUE_HEADERS, EXCHANGES, QUEUES, type TrabalhoDeEntrega } from '@hub/contracts';
import type { Logger } from '@hub/log';
import type { Db } from '../../db';
import { trabalhosDasEntregas } from '../entregas/trabalho';
import { assentarAcks, copiarNaFilaDeErro, entregaIdDe, lerMensagens, type Mensagem } from './fila-de-erro';
import { type Cursor, type EstadoDaEntrega, filaRepository, INICIO } from './fila.repository';
import type { ResultadoDaConciliacao } from './fila.schemas';
import { conciliacaoEmAndamento, type Trava, type TravaDaFilaDeErro } from './trava';

export interface ConciliacaoDeps {
  db: Db;
  broker: Broker;
  logger: Logger;
  /** The locks shared with the looks (a session of their own in the hub's database). */
  trava: TravaDaFilaDeErro;
  /**
   * A delivery still pendente/em_andamento/aguardando_nova_tentativa whose job the work queue
   * dead-lettered as poison is marked fila_de_erro once it has not moved for this long.
   */
  paradaMs?: number;
  /** Messages read and decided together. */
  lote?: number;
  /** How often a pass waiting for another hub-api's pass to end tries the lock again. */
  intervaloMs?: number;
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
 * A message whose delivery is in the queue by its row (pendente, em_andamento, aguardando): remove
 * it unless it is that delivery's own job dead-lettered as poison while the row stood still, in
 * which case nothing will move the delivery again and it belongs in fila_de_erro once it has stood
 * still for paradaMs (before that, wait: the worker may still be writing it).
 */
function destinoNaFila(mensagem: Mensagem, entrega: EstadoDaEntrega, agora: Date, paradaMs: number) {
  const envenenada = envenenadaEm(mensagem);
  const moveuDepois = envenenada && entrega.atualizada_em.getTime() > envenenada.getTime() + 1_000;
  if (!envenenada || moveuDepois) return 'remover';
  return entrega.atualizada_em.getTime() < agora.getTime() - paradaMs ? 'marcar' : 'esperar';
}

const FINAIS = new Set(['fila_de_erro', 'concluida', 'cancelada']);

/** The deliveries a batch would mark fila_de_erro (poison jobs of rows that stood still), once each. */
function aMarcar(
  mensagens: readonly Mensagem[],
  entregas: ReadonlyMap<string, EstadoDaEntrega>,
  mantidas: ReadonlySet<string>,
  agora: Date,
  paradaMs: number,
): EstadoDaEntrega[] {
  const candidatas = new Map<string, EstadoDaEntrega>();
  for (const mensagem of mensagens) {
    const id = entregaIdDe(mensagem);
    const entrega = id ? entregas.get(id) : undefined;
    if (!id || !entrega || mantidas.has(id) || FINAIS.has(entrega.situacao)) continue;
    if (destinoNaFila(mensagem, entrega, agora, paradaMs) === 'marcar') candidatas.set(id, entrega);
  }
  return [...candidatas.values()];
}

/**
 * What to do with each message of a batch, in order, given the rows as read and the deliveries
 * just marked: the messages to keep (the rest are removed), counted into r; `mantidas` grows with
 * each delivery whose message is kept, so a later message of it is a duplicate.
 */
function decidir(
  mensagens: readonly Mensagem[],
  entregas: ReadonlyMap<string, EstadoDaEntrega>,
  marcadas: ReadonlySet<string>,
  mantidas: Set<string>,
  r: ResultadoDaConciliacao,
  agora: Date,
  paradaMs: number,
): Mensagem[] {
  const guardar: Mensagem[] = [];
  const manter = (mensagem: Mensagem, id: string) => {
    mantidas.add(id);
    r.mensagens_mantidas += 1;
    guardar.push(mensagem);
  };
  for (const mensagem of mensagens) {
    const id = entregaIdDe(mensagem);
    const entrega = id ? entregas.get(id) : undefined;
    if (!id) {
      r.mensagens_ilegiveis += 1;
      guardar.push(mensagem);
    } else if (!entrega) r.removidas_sem_entrega += 1;
    else if (mantidas.has(id)) r.removidas_duplicadas += 1;
    else if (entrega.situacao === 'fila_de_erro') manter(mensagem, id);
    else if (FINAIS.has(entrega.situacao)) r.removidas_fora_da_fila_de_erro += 1;
    else {
      const destino = destinoNaFila(mensagem, entrega, agora, paradaMs);
      if (destino === 'remover') r.removidas_fora_da_fila_de_erro += 1;
      else if (destino === 'marcar' && marcadas.has(id)) {
        r.entregas_marcadas_fila_de_erro += 1;
        manter(mensagem, id);
      } else {
        // Not stood still long enough, or its row moved between the read and the mark: next pass.
        r.mensagens_em_espera += 1;
        guardar.push(mensagem);
      }
    }
  }
  return guardar;
}

const resultadoVazio = (inicio: Date): ResultadoDaConciliacao => ({
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
});

/** hub-api is stopping: a pass stops between two steps (each is safe to repeat; the next pass goes on). */
class ConciliacaoInterrompida extends Error {
  override name = 'ConciliacaoInterrompida';
  constructor() {
    super('hub-api is stopping: the reconciliation stopped between two steps; the next pass goes on');
  }
}

/** How a call behaves while another hub-api runs a pass. */
export interface OpcoesDaConciliacao {
  /** 'esperar' (default): start once it ends; 'recusar': 409 conciliacao_em_andamento at once. */
  seOutraInstanciaConcilia?: 'esperar' | 'recusar';
}

/**
 * Makes the error queue agree one to one with the deliveries in fila_de_erro (architecture §5), the
 * database being the source of truth. One pass at a time across every hub-api: a session-level
 * advisory lock on a connection of its own (trava.ts), so no transaction stays open across
 * RabbitMQ and no pool connection is held for the pass; its database writes are single statements.
 * It reads each message that was in the queue when it started, without auto-ack: a message to
 * remove is acked; a message to keep is published again with a confirm and only then acked (no
 * requeue, so no delivery count grows and nothing is lost if the pass dies: an unacked message
 * returns to the queue, a copy without its ack is a duplicate the next pass removes). Then every
 * delivery in fila_de_erro left without a message gets its job rebuilt from the database and
 * published to the error exchange with a confirm. Before each step that settles messages or
 * publishes, it confirms that its lock's session is alive; when it is not, the pass stops there.
 */
export function conciliacaoDaFilaDeErro(deps: ConciliacaoDeps) {
  const { db, broker, logger, trava } = deps;
  const repo = filaRepository(db);
  const paradaMs = deps.paradaMs ?? 5 * 60_000;
  const lote = deps.lote ?? 200;
  const intervaloMs = deps.intervaloMs ?? 1_000;
  const relogio = deps.relogio ?? (() => new Date());
  const parada = new AbortController();

  const interromperSeParando = () => {
    if (parada.signal.aborted) throw new ConciliacaoInterrompida();
  };

  /** The pass's lock; while another hub-api holds it, waits for it or refuses (409). */
  async function tomarTrava(recusar: boolean): Promise<Trava> {
    for (;;) {
      interromperSeParando();
      const tomada = await trava.paraConciliar();
      if (tomada) return tomada;
      if (recusar)
        throw conciliacaoEmAndamento('another hub-api is reconciling the error queue; ask again after Retry-After');
      await pausa(intervaloMs, undefined, { signal: parada.signal }).catch(() => undefined);
    }
  }

  async function decidirLote(
    canal: Channel,
    mensagens: Mensagem[],
    mantidas: Set<string>,
    r: ResultadoDaConciliacao,
    travada: Trava,
  ): Promise<void> {
    const agora = relogio();
    const entregas = await repo.estados([
      ...new Set(mensagens.map(entregaIdDe).filter((id): id is string => id !== undefined)),
    ]);
    const marcadas = await repo.marcarEnvenenadas(aMarcar(mensagens, entregas, mantidas, agora, paradaMs), agora);
    const guardar = decidir(mensagens, entregas, marcadas, mantidas, r, agora, paradaMs);
    // Lost lock: another pass may be reading now. Stop before settling anything: the batch stays
    // unacked and returns to the queue with the channel (a mark already made is kept by the next pass).
    await travada.confirmar();
    await Promise.all(guardar.map((mensagem) => copiarNaFilaDeErro(broker, mensagem)));
    // One ack for the whole batch: every message of it is settled now (removed, or copied and confirmed).
    const ultima = mensagens[mensagens.length - 1];
    if (ultima) canal.ack(ultima, true);
  }

  /** Reads, decides and settles the messages present when it starts (the kept copies go to the tail, unread). */
  async function examinarFila(mantidas: Set<string>, r: ResultadoDaConciliacao, travada: Trava): Promise<void> {
    await broker.withChannel(async (canal) => {
      try {
        let restantes = (await canal.checkQueue(QUEUES.entregasErro)).messageCount;
        while (restantes > 0) {
          interromperSeParando();
          const mensagens = await lerMensagens(canal, QUEUES.entregasErro, Math.min(lote, restantes));
          if (mensagens.length === 0) break;
          restantes -= mensagens.length;
          r.mensagens_examinadas += mensagens.length;
          await decidirLote(canal, mensagens, mantidas, r, travada);
        }
      } finally {
        // Also when stopping half-way: the acks already sent must not come back with the close.
        await assentarAcks(canal, QUEUES.entregasErro).catch(() => undefined);
      }
    });
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

  /** Deliveries in fila_de_erro since before the pass began that no message stood for. */
  async function republicarFaltantes(mantidas: Set<string>, inicio: Date, travada: Trava): Promise<number> {
    let republicadas = 0;
    let cursor: Cursor = INICIO;
    for (;;) {
      interromperSeParando();
      const linhas = await repo.naFilaDeErro(inicio, cursor, 1000);
      if (linhas.length === 0) return republicadas;
      cursor = linhas[linhas.length - 1]!;
      const faltantes = linhas.filter((l) => !mantidas.has(l.id));
      const trabalhos = await trabalhosDasEntregas(
        db,
        faltantes.map((l) => l.id),
      );
      await travada.confirmar();
      await Promise.all(
        faltantes.map((l) => {
          const trabalho = trabalhos.get(l.id);
          return trabalho ? publicarNaFilaDeErro(trabalho, l.tentativas_no_ciclo_atual, l.ultimo_erro) : undefined;
        }),
      );
      republicadas += faltantes.filter((l) => trabalhos.has(l.id)).length;
    }
  }

  async function passar(recusar: boolean): Promise<ResultadoDaConciliacao> {
    const travada = await tomarTrava(recusar);
    try {
      const inicio = relogio();
      const r = resultadoVazio(inicio);
      const mantidas = new Set<string>();
      await examinarFila(mantidas, r, travada);
      r.entregas_republicadas = await republicarFaltantes(mantidas, inicio, travada);
      r.concluida_em = relogio().toISOString();
      return r;
    } catch (error) {
      // A pass cut by its lock's session names that cause (a lost database answers 503).
      const perdida = await travada.confirmar().then(
        () => undefined,
        (causa: unknown) => causa,
      );
      if (perdida && !(error instanceof ConciliacaoInterrompida))
        throw new Error('the reconciliation lost its lock (its database session ended) and stopped', {
          cause: perdida,
        });
      throw error;
    } finally {
      // Ending the session releases both locks, whatever happened above.
      await travada.soltar();
    }
  }

  let corrente: Promise<ResultadoDaConciliacao> | undefined;
  let outraDepois: Promise<ResultadoDaConciliacao> | undefined;

  const conciliacao = {
    /**
     * One pass that starts after this call (a pass under way in this hub-api when it is called may
     * have read the queue before the change that asked for it, so a second one is queued; callers
     * meanwhile share it). While another hub-api runs a pass, waits for it to end, or, with
     * seOutraInstanciaConcilia 'recusar', is refused with 409 conciliacao_em_andamento.
     */
    conciliar(opcoes: OpcoesDaConciliacao = {}): Promise<ResultadoDaConciliacao> {
      if (!corrente) {
        corrente = passar(opcoes.seOutraInstanciaConcilia === 'recusar').finally(() => {
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
        .catch((error) =>
          error instanceof ConciliacaoInterrompida
            ? logger.warn(error.message)
            : logger.error({ err: error }, 'error queue reconciliation failed'),
        );
    },

    /** Stops the passes under way between two steps, ends any wait for another hub-api's pass, and waits for them. */
    async parar(): Promise<void> {
      parada.abort();
      await outraDepois?.catch(() => undefined);
      await corrente?.catch(() => undefined);
    },
  };
  return conciliacao;
}
export type ConciliacaoDaFilaDeErro = ReturnType<typeof conciliacaoDaFilaDeErro>;
