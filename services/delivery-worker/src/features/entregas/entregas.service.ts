import { randomUUID } from 'node:crypto';
import { ATTEMPT_HEADER, type Broker, type ConsumeMessage, decode, RequeueMessage, UnroutableError } from '@hub/broker';
import {
  CLOUDEVENTS_CONTENT_TYPE,
  corpoCloudEvents,
  type DeliveryTopology,
  ERROR_QUEUE_HEADERS,
  type TrabalhoDeEntrega,
  trabalhoDeEntrega,
} from '@hub/contracts';
import { uuidv7 } from '@hub/database';
import { origemDaUrl } from '@hub/destinations';
import type { Logger } from '@hub/log';
import { type KeyStore, signWebhookText } from '@hub/signing';
import {
  comRastro,
  iniciarTrecho,
  rastreamentoLigado,
  rastroDe,
  SpanKind,
  TRACEPARENT,
  type Trecho,
} from '@hub/tracing';
import { Lote } from '../../lote';
import type { Metricas } from '../../metricas';
import { type Destinos, type Regras, retido } from '../destinos/destinos';
import { destinoFora } from '../destinos/circuito';
import { type Isolamento, propriedadesDoTrabalho } from '../destinos/isolamento';
import { proximoAtraso } from './atrasos';
import {
  type EntregasRepository,
  type Final,
  type Pedido,
  type Registrada,
  type Registro,
  type Reivindicada,
  trabalhoDaLinha,
} from './entregas.repository';
import { LimitePorDestino, Parando } from './limite-por-destino';
import type { Remetente } from './remetente';

export interface EntregasDeps {
  repo: EntregasRepository;
  broker: Broker;
  topologia: DeliveryTopology;
  keys: KeyStore;
  remetente: Remetente;
  logger: Logger;
  metricas: Metricas;
  passosMs: readonly number[];
  /** The destinations' limits, pauses and circuits (the rows of destino, this process's share). */
  destinos: Pick<Destinos, 'regras' | 'anotar' | 'aoMudar' | 'sondar' | 'concluirSonda' | 'devolverSonda'>;
  /** The destinations with a queue of their own (architecture §5, fair scheduling). */
  isolamento: Pick<Isolamento, 'rotaDe' | 'reter' | 'anotarAdiamento' | 'anotarTrabalho' | 'aoIsolar'>;
  /** How long a job may wait in memory for its destination's turn before it is deferred. */
  esperaPorDestinoMs: number;
  /**
   * Least milliseconds between the starts of two record statements (DELIVERY_RECORD_SPACING; GroupCommit's
   * `espacamento`). A record comes after the POST: waiting delays only the job's ack, and an ordered
   * delivery's record, which the next event of its entity waits for, goes at once.
   */
  espacamentoDosRegistrosMs?: number;
  /** The consumer's retry policy's attempts: a job that fails its last one is dead-lettered by the broker. */
  tentativasDoConsumidor: number;
  /** The address of GET /esquema/{nome}/{versao} at the gateway: a CloudEvents body's dataschema. */
  urlDoEsquema: (nome: string, versao: number) => string;
}

/**
 * The header with the token of its delivery's claim that a job carries when it leaves the worker
 * still holding the claim (deferred, paused after its claim, or retried by the consumer after a
 * failure): back, it continues that claim, which no other job can take while its lease lasts.
 */
export const CABECALHO_REIVINDICACAO = 'hub-reivindicacao';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The header with the `traceparent` of a delivery's last attempt that its retry carries: the next
 * attempt's span links to it (docs/decisions/tracing.md).
 */
export const CABECALHO_TENTATIVA_ANTERIOR = 'hub-tentativa-anterior';

/** The claim token a job carries, if any (anything else in the header is ignored). */
function tokenDe(message: ConsumeMessage): string | null {
  const valor = message.properties.headers?.[CABECALHO_REIVINDICACAO];
  return typeof valor === 'string' && UUID.test(valor) ? valor : null;
}

/** Origins of destination URLs already parsed: as many as a worker's subscriptions usually point at. */
const ORIGENS_CONHECIDAS = 10_000;
const origens = new Map<string, string>();

/**
 * A job's URL that does not parse matches no destination: its attempt fails on its own and is
 * recorded. Each URL string is parsed once (twice per job otherwise: the job's and the claim's),
 * then the kept origins are forgotten together past ORIGENS_CONHECIDAS.
 */
function origemDoTrabalho(url: string): string {
  let origem = origens.get(url);
  if (origem === undefined) {
    origem = URL.canParse(url) ? origemDaUrl(url) : 'invalida';
    if (origens.size >= ORIGENS_CONHECIDAS) origens.clear();
    origens.set(url, origem);
  }
  return origem;
}

/**
 * The fields every log line about a job starts with: its delivery and the request id of the
 * publication that caused it. Passed by hand rather than by an AsyncLocalStorage around the job:
 * on Node 20 an AsyncLocalStorage in use turns on promise hooks for every promise of the process
 * (docs/decisions/delivery-worker-cpu.md).
 */
const doTrabalho = (t: TrabalhoDeEntrega) =>
  t.request_id ? { request_id: t.request_id, entrega_id: t.entrega_id } : { entrega_id: t.entrega_id };

/** The claim a job holds on its delivery, from its claim until its attempt is recorded. */
interface Posse {
  token?: string;
  /** The destination circuit's probe this job holds (half-open), until its result is recorded. */
  sonda?: { origem: string; token: string };
  /**
   * The job came from its isolated destination's own queue, consumed with the destination's share as
   * prefetch: each job holds a slot there until it is acked, so its record does not wait for
   * DELIVERY_RECORD_SPACING (waiting, a share of 10 went 10 deliveries a second at most with a spacing
   * of 1s, and the sweeper's copies of the jobs waiting behind them filled the queue faster).
   */
  doDestino?: boolean;
}

/** The delay step a job of a paused destination waits in before it looks again: the longest up to a minute. */
export function passoDaPausa(passosMs: readonly number[]): number {
  const ate1Minuto = passosMs.filter((p) => p <= 60_000);
  return ate1Minuto.length > 0 ? Math.max(...ate1Minuto) : Math.min(...passosMs);
}

/**
 * The attempt of one delivery job (architecture §5): claim (batched with the jobs arriving together),
 * sign, POST, record attempt + state + tallies (batched, one statement), then publish the retry or
 * the error-queue message with a confirm; the consumer acks only after all of that.
 */
export function entregasService(deps: EntregasDeps) {
  const { repo, broker, topologia, logger, metricas } = deps;
  const { destinos, isolamento } = deps;
  /** Each batch's size, by what it writes (hub_group_commit_items). */
  const medida = (escrita: string) => (itens: number) => metricas.itensPorEscrita.observe({ escrita }, itens);
  const limite = new LimitePorDestino((origem) => destinos.regras(origem), deps.esperaPorDestinoMs);
  destinos.aoMudar(() => limite.reavaliar());
  // Jobs waiting here for a turn at a destination just isolated leave for its queue at once (below).
  isolamento.aoIsolar((origem) => limite.dispensar(origem));
  /**
   * Ordered delivery (docs/decisions/ordered-delivery-per-entity.md): a delivery of an ordered
   * subscription made final here passes its entity's turn to the next delivery, whose job, held back
   * since its publication, is published now. Batched like the claims and records (one
   * liberar_seguintes for the turns passed together, their jobs published at once, confirmed), apart
   * from the record's own batch, which it would otherwise hold; the job that made the delivery final
   * is acked after. A turn not passed (this process dies, the database or the broker fails) is the
   * sweeper's: a released delivery whose job is lost is due now, a turn not passed is found by
   * recolherVezesPerdidas.
   */
  const vezes = new Lote<Final, undefined>(
    async (finais) => {
      try {
        const liberadas = await repo.passarAVez(finais);
        await Promise.all(
          liberadas.map((l) =>
            broker.publish(
              topologia.entregas,
              trabalhoDeEntrega.routingKey,
              Buffer.from(JSON.stringify(trabalhoDaLinha(l))),
              {
                messageId: l.entrega_id,
                contentType: 'application/json',
                mandatory: true,
              },
            ),
          ),
        );
        if (liberadas.length > 0) metricas.trabalhos.inc({ desfecho: 'liberado' }, liberadas.length);
      } catch (error) {
        logger.warn({ err: error, entregas: finais.length }, 'turn of an ordered entity not passed; the sweeper will');
      }
      return finais.map(() => undefined);
    },
    { aoEsvaziar: medida('vez') },
  );
  /**
   * Passes the turn of the ordered deliveries among these that are final (an unordered one has no
   * sequencia). Nearly every delivery is unordered: then nothing is made, not even a promise (an
   * allocation profile found an empty filter and Promise.all here for every delivery).
   */
  function passarAVez(
    linhas: readonly { assinatura_id: string; entidade_id: string; sequencia: string | null }[],
  ): Promise<unknown> | undefined {
    if (!linhas.some((l) => l.sequencia !== null)) return undefined;
    return Promise.all(
      linhas
        .filter((l) => l.sequencia !== null)
        .map((l) => vezes.add({ assinatura_id: l.assinatura_id, entidade_id: l.entidade_id, sequencia: l.sequencia! })),
    );
  }

  // Claims and records: one statement of each under way at a time, as the floor's record (bench/floor):
  // the jobs arriving meanwhile wait for the next one, so under load each statement carries twice the
  // rows of two at once, and the worker (and PostgreSQL) pay half the round trips per delivery
  // (docs/decisions/delivery-worker-cpu.md).
  const reivindicacoes = new Lote<Pedido, Reivindicada | undefined>(
    async (pedidos) => {
      // One claim per delivery in a statement (jobs of one delivery are serialised here anyway).
      const unicos = new Map(pedidos.map((p) => [p.id, p]));
      const linhas = await repo.reivindicar([...unicos.values()]);
      const porId = new Map(linhas.map((l) => [l.id, l]));
      return pedidos.map((p) => (unicos.get(p.id) === p ? porId.get(p.id) : undefined));
    },
    { paralelos: 1, aoEsvaziar: medida('reivindicacao') },
  );
  /** Claims given back (a job leaving for its destination's queue), batched like the claims. */
  const liberacoes = new Lote<{ id: string; token: string }, undefined>(
    async (posses) => {
      await repo.liberar(posses);
      return posses.map(() => undefined);
    },
    { aoEsvaziar: medida('liberacao') },
  );
  const registros = new Lote<Registro, Registrada | undefined>(
    async (lote) => {
      const linhas = await repo.registrar(lote);
      const porId = new Map(linhas.map((l) => [l.id, l]));
      return lote.map((r) => porId.get(r.entrega_id));
    },
    { paralelos: 1, espacamento: deps.espacamentoDosRegistrosMs ?? 0, aoEsvaziar: medida('registro') },
  );
  /** Delivery ids with a job under way in this process, and that job's work. */
  const emCurso = new Map<string, Promise<void>>();
  let parando = false;
  /** The stop's deadline passed: the POSTs under way were cut (their jobs go back untouched). */
  let cortado = false;

  /**
   * The job as it came (body unchanged), message id = delivery id, mandatory and confirmed, with the
   * trace context it came with.
   */
  const publicar = (
    exchange: string,
    routingKey: string,
    message: ConsumeMessage,
    extra: { headers?: Record<string, unknown>; expiration?: string },
  ) => {
    const headers = comRastro(extra.headers, rastroDe(message.properties.headers));
    return broker.publish(exchange, routingKey, message.content, {
      messageId: decode(trabalhoDeEntrega, message).entrega_id,
      contentType: 'application/json',
      mandatory: true,
      ...extra,
      ...(headers ? { headers } : {}),
    });
  };

  /** The destination stayed at its limit for the whole wait: the job waits in the shortest delay queue instead. */
  async function adiar(message: ConsumeMessage, token: string, origem: string): Promise<void> {
    await esperarNaFila(message, Math.min(...deps.passosMs), 'adiado', token);
    metricas.adiadas.inc();
    isolamento.anotarAdiamento(origem);
  }

  /**
   * The job, as it came (message id, body, its own headers), into its destination's queue by
   * `rota`, confirmed; the caller acks the original after. A job holding a claim gives it back first
   * (one batched statement; jobs without one, nearly all, touch no database): behind a backlog its
   * lease would end and the sweeper would take it for lost. False when nothing is bound to the
   * route any more (the queue is being removed): the job is not sent and stays where it is.
   */
  async function encaminhar(message: ConsumeMessage, rota: string, entregaId: string): Promise<boolean> {
    const token = tokenDe(message);
    if (token) await liberacoes.add({ id: entregaId, token });
    try {
      await broker.publish(topologia.entregas, rota, message.content, {
        ...propriedadesDoTrabalho(message.properties, [CABECALHO_REIVINDICACAO]),
        messageId: entregaId,
        mandatory: true,
      });
    } catch (error) {
      if (error instanceof UnroutableError) return false;
      throw error;
    }
    metricas.trabalhos.inc({ desfecho: 'encaminhado' });
    return true;
  }

  /**
   * A held destination (paused, circuit open): the job goes to the destination's own queue, isolating
   * it now if need be, where it sits still, unconsumed, until the destination is released; when it
   * cannot (its queue is being removed, the database did not answer) it takes the pause's way.
   */
  async function reter(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    origem: string,
    token: string | null,
    regras: Regras,
  ) {
    const rota = await isolamento.reter(origem);
    if (rota) {
      if (token) message.properties.headers = { ...message.properties.headers, [CABECALHO_REIVINDICACAO]: token };
      if (await encaminhar(message, rota, trabalho.entrega_id)) return;
    }
    return esperarPausa(message, token, regras);
  }

  /**
   * The job, unchanged, into the delay queue of `passoMs`; it comes back to be looked at again,
   * carrying the claim it holds (no attempt made, nothing counted).
   */
  async function esperarNaFila(
    message: ConsumeMessage,
    passoMs: number,
    desfecho: string,
    token: string | null,
  ): Promise<void> {
    const extra = token ? { headers: { [CABECALHO_REIVINDICACAO]: token } } : {};
    await publicar(topologia.entregasAtraso, topologia.filaDeAtraso(passoMs), message, extra);
    metricas.trabalhos.inc({ desfecho });
  }

  /**
   * A held destination (`retido`: paused, or its circuit open): the job waits in a delay queue and
   * looks again, the delivery untouched (no attempt, nothing counted); the sweeper leaves its
   * deliveries alone meanwhile.
   */
  const esperarPausa = (message: ConsumeMessage, token: string | null, regras?: Regras) =>
    esperarNaFila(message, passoDaPausa(deps.passosMs), regras && !regras.pausado ? 'circuito' : 'pausado', token);

  /** A poison job (its claims kept dying with their worker): its delivery is fila_de_erro already. */
  /** The error queue's headers of a poison job (its claims died, or its message could not be read). */
  const cabecalhosDoVeneno = (linha: { tentativas_no_ciclo_atual: number; ultimo_erro: string | null }) => ({
    [ERROR_QUEUE_HEADERS.tentativas]: linha.tentativas_no_ciclo_atual,
    [ERROR_QUEUE_HEADERS.ultimoErro]: (linha.ultimo_erro ?? '').slice(0, 500),
    [ERROR_QUEUE_HEADERS.motivo]: 'limite_de_entregas',
  });
  function contarVeneno() {
    metricas.trabalhos.inc({ desfecho: 'envenenado' });
    metricas.situacoes.inc({ situacao: 'fila_de_erro' });
  }

  async function aFilaDeErro(
    message: ConsumeMessage,
    linha: { tentativas_no_ciclo_atual: number; ultimo_erro: string | null },
  ) {
    await publicar(topologia.entregasErro, '', message, {
      headers: cabecalhosDoVeneno(linha),
    });
    contarVeneno();
  }

  async function tentar(trabalho: TrabalhoDeEntrega, message: ConsumeMessage, posse: Posse): Promise<void> {
    const anterior = tokenDe(message);
    const origemDoJob = origemDoTrabalho(trabalho.url_de_destino);
    const regrasDoTrabalho = destinos.regras(origemDoJob);
    if (retido(regrasDoTrabalho)) return reter(trabalho, message, origemDoJob, anterior, regrasDoTrabalho);
    // Claimed before the destination's turn: the turn is held for the POST alone, not for a round
    // trip to the database (with one destination, its limit is what bounds the throughput).
    const token = randomUUID();
    const reivindicada = await reivindicacoes.add({ id: trabalho.entrega_id, token, anterior });
    if (!reivindicada) {
      metricas.trabalhos.inc({ desfecho: 'descartado' });
      logger.debug(doTrabalho(trabalho), 'delivery final, unknown, not due or held by another job: job dropped');
      return;
    }
    // Cancelled (subscription off) or poison: final, so the entity's next delivery may go.
    if (reivindicada.situacao !== 'em_andamento') await passarAVez([reivindicada]);
    if (reivindicada.situacao === 'cancelada') {
      metricas.trabalhos.inc({ desfecho: 'cancelado' });
      metricas.situacoes.inc({ situacao: 'cancelada' });
      logger.info(doTrabalho(trabalho), 'subscription off: delivery cancelled');
      return;
    }
    if (reivindicada.situacao === 'fila_de_erro') {
      await aFilaDeErro(message, reivindicada);
      logger.warn(
        { ...doTrabalho(trabalho), erro: reivindicada.ultimo_erro },
        'poison job: delivery in the error queue',
      );
      return;
    }
    posse.token = token;
    // The subscription's URL now (a PATCH since the job was written moves the attempt with it).
    const url = reivindicada.url_de_destino;
    const origem = origemDoTrabalho(url);
    const regras = destinos.regras(origem);
    if (retido(regras)) return reter(trabalho, message, origem, token, regras);
    const liberar = await limite.entrar(origem);
    if (parando) {
      liberar?.();
      throw new RequeueMessage('the worker is stopping');
    }
    if (!liberar) {
      // Its destination got a queue of its own while the job waited (or before its wait ran out):
      // it waits there, its claim given back, instead of cycling through a delay queue to be
      // forwarded from the shared queue after.
      const rota = isolamento.rotaDe(origem);
      if (rota) {
        message.properties.headers = { ...message.properties.headers, [CABECALHO_REIVINDICACAO]: token };
        if (await encaminhar(message, rota, trabalho.entrega_id)) return;
      }
      return adiar(message, token, origem);
    }
    try {
      // Paused, or its circuit opened, while the job waited for its turn.
      const agora = destinos.regras(origem);
      if (retido(agora)) return await reter(trabalho, message, origem, token, agora);
      if (agora.circuito !== 'fechado') {
        // Half-open: the open period is over (or the probe under way lost its lease). This job
        // asks for the probe; a job that does not get it (another job, here or in another worker,
        // has it) goes back to its destination's queue, whose consumers stop while the probe is
        // under way. When the rules still let it ask (the database did not answer, or this process
        // is asking for the probe for another job) it waits in the delay queue instead, so that it
        // does not come straight back to ask again. A statement that found the circuit closed
        // (by hand, or by a probe elsewhere, since this process last read it) lets the job go now.
        const sonda = await destinos.sondar(origem);
        if (!sonda) {
          const depois = destinos.regras(origem);
          if (retido(depois)) return await reter(trabalho, message, origem, token, depois);
          if (depois.circuito !== 'fechado') return await esperarPausa(message, token, depois);
        } else posse.sonda = { origem, token: sonda };
      }
      await enviarERegistrar(trabalho, url, message, reivindicada, liberar, origem, posse);
    } finally {
      liberar();
    }
  }

  /**
   * A job that fails after its claim: given back when the worker is stopping (its delivery waits
   * again, claimable at once); on the consumer's last try, its delivery goes to fila_de_erro before
   * the broker dead-letters the job (a poison job, once); otherwise its retry carries the claim.
   * Gives the error the consumer must see.
   */
  async function depoisDaFalha(
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    posse: Posse,
    error: unknown,
  ): Promise<unknown> {
    if (posse.sonda) {
      // A probe taken and not attempted: given back, so another job takes it at once.
      await destinos.devolverSonda(posse.sonda.origem, posse.sonda.token);
      posse.sonda = undefined;
    }
    if (error instanceof Parando || error instanceof RequeueMessage) {
      if (posse.token)
        await repo
          .liberar([{ id: trabalho.entrega_id, token: posse.token }])
          .catch((e) => logger.warn({ ...doTrabalho(trabalho), err: e }, 'claim not released; its lease ends it'));
      return error instanceof Parando ? new RequeueMessage(error.message) : error;
    }
    const tentativa = Number(message.properties.headers?.[ATTEMPT_HEADER]) || 1;
    if (tentativa >= deps.tentativasDoConsumidor) {
      const motivo = error instanceof Error ? error.message : String(error);
      const envenenada = await repo
        .envenenar(
          trabalho.entrega_id,
          posse.token ?? null,
          `poison job: the worker failed on it ${tentativa} times (${motivo.slice(0, 500)})`,
        )
        .catch((e) => {
          logger.warn({ ...doTrabalho(trabalho), err: e }, 'poison job not marked');
          return [];
        });
      await passarAVez(envenenada);
    } else if (posse.token) {
      // The consumer's retry publishes the job with its headers: the claim travels with it.
      message.properties.headers = { ...(message.properties.headers ?? {}), [CABECALHO_REIVINDICACAO]: posse.token };
    }
    return error;
  }

  /**
   * A message that is not a delivery job. When its message id names a delivery still open, that
   * delivery goes to fila_de_erro and its job, rebuilt from the database, to the error queue, once;
   * otherwise the broker dead-letters the message as it came.
   */
  async function ilegivel(message: ConsumeMessage, error: unknown): Promise<void> {
    const id = message.properties.messageId;
    const motivo = error instanceof Error ? error.message : String(error);
    const [linha] =
      typeof id === 'string' && UUID.test(id)
        ? await repo.envenenar(id, null, `poison job: its message could not be read (${motivo.slice(0, 500)})`)
        : [];
    if (!linha) throw error;
    await passarAVez([linha]);
    await broker.publish(topologia.entregasErro, '', Buffer.from(JSON.stringify(trabalhoDaLinha(linha))), {
      messageId: linha.entrega_id,
      contentType: 'application/json',
      mandatory: true,
      headers: cabecalhosDoVeneno(linha),
    });
    contarVeneno();
    logger.warn({ entrega_id: linha.entrega_id, erro: motivo }, 'unreadable job: delivery in the error queue');
  }

  async function enviarERegistrar(
    trabalho: TrabalhoDeEntrega,
    url: string,
    message: ConsumeMessage,
    reivindicada: Reivindicada,
    liberar: () => void,
    origem: string,
    posse: Posse,
  ): Promise<void> {
    metricas.trabalhos.inc({ desfecho: 'tentado' });
    // The attempt's span (when tracing records): a child of the job's message (its context in the
    // headers), linked to the delivery's previous attempt; the POST is its child, and the subscriber
    // gets a traceparent of the trace either way.
    const trecho = rastreamentoLigado()
      ? iniciarTrecho('entrega.tentativa', {
          tipo: SpanKind.CONSUMER,
          pai: message.properties.headers,
          links: [rastroDe({ [TRACEPARENT]: message.properties.headers?.[CABECALHO_TENTATIVA_ANTERIOR] })],
          atributos: {
            'hub.entrega_id': trabalho.entrega_id,
            'hub.evento_id': trabalho.evento_id,
            'hub.tentativa': reivindicada.tentativas_no_ciclo_atual + 1,
            'server.address': origem,
          },
        })
      : iniciarTrecho('entrega.tentativa', { pai: message.properties.headers });
    // Nothing recorded (tracing off): no span to end, so no async frame of its own around the attempt.
    if (!trecho.span) return tentarNoTrecho(trabalho, url, message, reivindicada, liberar, origem, posse, trecho);
    try {
      await tentarNoTrecho(trabalho, url, message, reivindicada, liberar, origem, posse, trecho);
      trecho.fim();
    } catch (error) {
      trecho.fim(error);
      throw error;
    }
  }

  async function tentarNoTrecho(
    trabalho: TrabalhoDeEntrega,
    url: string,
    message: ConsumeMessage,
    reivindicada: Reivindicada,
    liberar: () => void,
    origem: string,
    posse: Posse,
    trecho: Trecho,
  ): Promise<void> {
    // The subscription's formato at this attempt: a CloudEvents subscription's body is made from the
    // job's, the same bytes on every attempt (docs/contract.md §11).
    const cloudEvents = reivindicada.formato === 'cloudevents';
    const texto = cloudEvents ? corpoCloudEvents(trabalho.corpo, deps.urlDoEsquema) : trabalho.corpo;
    // The body's bytes once, written beside the signature's prefix: signed, and the same bytes sent.
    const { headers: cabecalhos, body: corpo } = signWebhookText(
      { id: trabalho.entrega_id, body: texto },
      deps.keys.signersNow() ?? (await deps.keys.signers()),
    );
    metricas.emVoo.inc();
    const tipoDoConteudo = cloudEvents ? CLOUDEVENTS_CONTENT_TYPE : 'application/json';
    const resultado = await trecho.ativo(() =>
      deps.remetente.enviar(url, corpo, cabecalhos, trecho.rastro, tipoDoConteudo),
    );
    if (trecho.span) {
      trecho.atributos({ 'hub.resultado': resultado.sucesso ? 'sucesso' : 'falha' });
      if (resultado.statusHttp !== null) trecho.atributos({ 'http.response.status_code': resultado.statusHttp });
    }
    metricas.emVoo.dec();
    liberar(); // the destination's turn is over with the POST; recording does not hold it
    if (cortado && !resultado.sucesso) {
      // Cut short by the stop: not a real attempt; the job goes back to the queue untouched.
      throw new RequeueMessage('the worker stopped during the attempt');
    }
    const sonda = posse.sonda;
    const saudavel = !destinoFora(resultado);
    destinos.anotar(
      origem,
      resultado.sucesso,
      resultado.duracaoMs,
      resultado.iniciadaEm,
      sonda !== undefined,
      saudavel,
    );
    if (sonda) {
      posse.sonda = undefined;
      const desfecho = resultado.statusHttp === null ? (resultado.erro ?? 'no answer') : `HTTP ${resultado.statusHttp}`;
      await destinos.concluirSonda(origem, sonda.token, saudavel, desfecho);
    }
    const rotulo = resultado.sucesso ? 'sucesso' : 'falha';
    // A failed attempt is a line at info; a successful one only at debug: its row in tentativa and
    // the metrics tell it, and a line per delivery was the worker's largest cost after the POST and
    // the signature (docs/decisions/delivery-worker-cpu.md).
    const nivel = resultado.sucesso ? 'debug' : 'info';
    if (logger.isLevelEnabled(nivel))
      logger[nivel](
        {
          ...doTrabalho(trabalho),
          evento_id: trabalho.evento_id,
          origem,
          resultado: rotulo,
          status_http: resultado.statusHttp,
          duracao_ms: resultado.duracaoMs,
          ...(resultado.erro ? { erro: resultado.erro } : {}),
        },
        'delivery attempt',
      );
    metricas.tentativas.inc({ resultado: rotulo });
    metricas.tentativasPorDestino.inc({ origem, resultado: rotulo });
    metricas.duracao.observe({ resultado: rotulo }, resultado.duracaoMs / 1000);
    const encerrar = resultado.statusHttp === 410;
    // The next step and its expiry matter to a failure alone (its record's due dates, its retry).
    const atraso = resultado.sucesso
      ? undefined
      : proximoAtraso(reivindicada.tentativas_no_ciclo_atual + 1, deps.passosMs, resultado.retryAfterMs);
    const fim = resultado.iniciadaEm.getTime() + resultado.duracaoMs;
    const registrada = await registros.add(
      {
        entrega_id: trabalho.entrega_id,
        tentativa_id: uuidv7(resultado.iniciadaEm.getTime()),
        iniciada_em: resultado.iniciadaEm,
        duracao_ms: resultado.duracaoMs,
        status_http: resultado.statusHttp,
        sucesso: resultado.sucesso,
        resposta: resultado.resposta,
        erro: encerrar ? `${resultado.erro} (410 Gone: the subscription is switched off)` : resultado.erro,
        cabecalhos,
        encerrar,
        proxima_tentativa_em: atraso ? new Date(fim + atraso.expiracaoMs) : null,
        retorno_ate: atraso ? new Date(fim + atraso.passoMs) : null,
      },
      // Urgent for an ordered delivery (the next event of its entity waits for this record) and for a
      // job of an isolated destination's queue (its prefetch waits for it).
      reivindicada.sequencia !== null || posse.doDestino === true,
    );
    posse.token = undefined; // recorded: the claim is over
    if (!registrada) {
      logger.info(doTrabalho(trabalho), 'delivery finished by another attempt meanwhile');
      return;
    }
    metricas.situacoes.inc({ situacao: registrada.situacao });
    if (registrada.situacao !== 'aguardando_nova_tentativa') await passarAVez([registrada]);
    if (registrada.situacao === 'cancelada') {
      logger.info(doTrabalho(trabalho), 'subscription deleted during the attempt: delivery cancelled');
    } else if (registrada.situacao === 'aguardando_nova_tentativa') {
      const { passoMs, expiracaoMs } =
        atraso ?? proximoAtraso(reivindicada.tentativas_no_ciclo_atual + 1, deps.passosMs, resultado.retryAfterMs);
      const anterior = trecho.span ? trecho.rastro?.[TRACEPARENT] : undefined;
      await publicar(topologia.entregasAtraso, topologia.filaDeAtraso(passoMs), message, {
        expiration: String(expiracaoMs),
        ...(anterior ? { headers: { [CABECALHO_TENTATIVA_ANTERIOR]: anterior } } : {}),
      });
    } else if (registrada.situacao === 'fila_de_erro') {
      await publicar(topologia.entregasErro, '', message, {
        headers: {
          [ERROR_QUEUE_HEADERS.tentativas]: registrada.tentativas_no_ciclo_atual,
          [ERROR_QUEUE_HEADERS.ultimoErro]: (resultado.erro ?? '').slice(0, 500),
          [ERROR_QUEUE_HEADERS.motivo]: encerrar ? 'assinatura_encerrada' : 'tentativas_esgotadas',
        },
      });
      logger.warn(
        { ...doTrabalho(trabalho), erro: resultado.erro, tentativas: registrada.tentativas_no_ciclo_atual },
        encerrar
          ? 'subscription gone (410): delivery in the error queue'
          : 'delivery out of attempts: in the error queue',
      );
    }
  }

  /** A second job of a delivery under way here: after the first, it claims as usual. */
  async function depoisDoAnterior(
    primeiro: Promise<void>,
    trabalho: TrabalhoDeEntrega,
    message: ConsumeMessage,
    posse: Posse,
  ): Promise<void> {
    await primeiro.catch(() => undefined);
    if (parando) throw new RequeueMessage('the worker is stopping');
    await tentar(trabalho, message, posse);
  }

  /**
   * A job taken from the shared work queue (`doDestino` false) or from an isolated destination's
   * own queue: resolves when it may be acked.
   */
  async function processar(message: ConsumeMessage, doDestino: boolean): Promise<void> {
    let trabalho: TrabalhoDeEntrega;
    try {
      trabalho = decode(trabalhoDeEntrega, message);
    } catch (error) {
      return ilegivel(message, error);
    }
    if (parando) throw new RequeueMessage('the worker is stopping');
    if (!doDestino) {
      const origem = origemDoTrabalho(trabalho.url_de_destino);
      const rota = isolamento.rotaDe(origem);
      if (rota && (await encaminhar(message, rota, trabalho.entrega_id))) return;
      isolamento.anotarTrabalho(origem);
    }
    // A second job of a delivery under way here waits for the first, then claims as usual (dropped
    // if the first finished it). Never acked at once: after a broker connection loss the copy is
    // the redelivery of the first job, whose own ack (or retry publish) is lost with the old channel.
    const anterior = emCurso.get(trabalho.entrega_id);
    if (anterior) {
      metricas.trabalhos.inc({ desfecho: 'duplicado' });
      logger.debug(doTrabalho(trabalho), 'a job of this delivery is under way here: waiting for it');
    }
    const posse: Posse = { doDestino };
    // Every log line of the job carries the request id of the publication that caused it (doTrabalho).
    const atual = anterior ? depoisDoAnterior(anterior, trabalho, message, posse) : tentar(trabalho, message, posse);
    emCurso.set(trabalho.entrega_id, atual);
    try {
      await atual;
    } catch (error) {
      throw await depoisDaFalha(trabalho, message, posse, error);
    } finally {
      if (emCurso.get(trabalho.entrega_id) === atual) emCurso.delete(trabalho.entrega_id);
    }
  }

  return {
    limite,

    /**
     * The handler of the shared work queue: resolves when the job may be acked. A job of an isolated
     * destination (published before the isolation was known, or back from a delay queue) is sent
     * on to its destination's queue, untouched.
     */
    processar(message: ConsumeMessage): Promise<void> {
      return processar(message, false);
    },

    /** The handler of an isolated destination's own queue. */
    processarDoDestino(message: ConsumeMessage): Promise<void> {
      return processar(message, true);
    },

    /**
     * Stop: jobs not started go back to the queue now; POSTs under way get `prazoMs` to finish,
     * then they are cut and their jobs go back too. Resolves at once; the consumer's close waits.
     */
    parar(prazoMs: number): void {
      parando = true;
      limite.dispensarEsperas();
      // The records waiting for DELIVERY_RECORD_SPACING go now: their acks, and so the drain, wait for them.
      registros.semEspacamento();
      setTimeout(() => {
        cortado = true;
        deps.remetente.cortar();
      }, prazoMs).unref();
    },
  };
}
export type EntregasService = ReturnType<typeof entregasService>;
