import { type Channel, declareRetryLadder, defineMessage, type OldLadder, quorumQueue } from '@hub/broker';
import { z } from 'zod';

/**
 * The messages the services exchange over RabbitMQ: one place that says which exchange carries
 * what, and what every body must look like.
 */

export const EXCHANGES = {
  /** topic: collaborator synchronisation published by the identity service */
  identidade: 'identidade.colaboradores',
  /** fanout: an access or a profile changed; every service drops its cached permissions */
  acesso: 'hub.acesso',
  /** topic: events the platform itself publishes to the hub (outboxes of the services) */
  eventosDaPlataforma: 'hub.eventos-da-plataforma',
  /** direct: delivery jobs, written to hub-api's outbox at publication and taken by the delivery worker */
  entregas: 'hub.entregas',
  /** fanout: deliveries that ran out of attempts (and poison jobs), into the error queue */
  entregasErro: 'hub.entregas.erro',
} as const;

export const colaboradorSincronizado = defineMessage({
  exchange: EXCHANGES.identidade,
  routingKey: 'colaborador.sincronizado',
  schema: z.object({
    termoauth_id: z.string().min(1),
    email: z.string(),
    nome: z.string(),
    funcao_id: z.string().nullable(),
    ativo: z.boolean(),
    /** true when the collaborator was removed from the identity service */
    removido: z.boolean(),
    /** increases with every change of this collaborator: older messages are ignored */
    versao: z.number().int().nonnegative(),
    ocorrido_em: z.string(),
  }),
});
export type ColaboradorSincronizado = z.infer<typeof colaboradorSincronizado.schema>;

export const acessoAlterado = defineMessage({
  exchange: EXCHANGES.acesso,
  routingKey: 'acesso.alterado',
  schema: z.object({
    /** e-mail of the access that changed; absent when a profile changed (drop everything) */
    email: z.string().optional(),
    acesso_id: z.string().optional(),
    perfil_de_acesso_id: z.string().optional(),
    motivo: z.string(),
  }),
});
export type AcessoAlterado = z.infer<typeof acessoAlterado.schema>;

/** An event the platform publishes to the hub, e.g. `colaborador.atualizado` from `identidade`. */
export const eventoDaPlataforma = defineMessage({
  exchange: EXCHANGES.eventosDaPlataforma,
  routingKey: 'evento.publicar',
  schema: z.object({
    /** unique per announcement: the hub creates nothing twice for the same id */
    id: z.string(),
    aplicativo_client_id: z.string(),
    tipo_de_evento_nome: z.string(),
    versao_do_esquema: z.number().int().positive(),
    entidade_id: z.string(),
    ocorrido_em: z.string(),
    dados: z.unknown(),
  }),
});
export type EventoDaPlataforma = z.infer<typeof eventoDaPlataforma.schema>;

/**
 * One attempt's worth of work for the delivery worker: everything its POST needs, so it sends
 * without reading the database first (architecture §5). The message id is the delivery id.
 */
export const trabalhoDeEntrega = defineMessage({
  exchange: EXCHANGES.entregas,
  routingKey: 'entrega.tentar',
  schema: z.object({
    entrega_id: z.string(),
    evento_id: z.string(),
    assinatura_id: z.string(),
    url_de_destino: z.string(),
    /**
     * The delivery body (architecture §5: id, tipo, versao_do_esquema, entidade_id, ocorrido_em,
     * recebido_em, aplicativo_publicador_id, assinatura_id, sequencia when ordered, teste when true,
     * dados) as JSON text,
     * signed and sent as it is: dados inside it are the publisher's text verbatim (a 20-digit
     * integer keeps every digit). Built by corpoDaEntrega.
     */
    corpo: z.string(),
    /** The request id of the publication, for the logs of the attempt. */
    request_id: z.string().nullable(),
  }),
});
export type TrabalhoDeEntrega = z.infer<typeof trabalhoDeEntrega.schema>;

/** The fields of an event that a delivery body carries (architecture §5), dados apart. */
export interface CabecaDaEntrega {
  evento_id: string;
  tipo: string;
  versao_do_esquema: number;
  entidade_id: string;
  ocorrido_em: Date;
  recebido_em: Date;
  aplicativo_publicador_id: string;
  /** Published from the panel (POST /evento): the body says `"teste":true`, absent otherwise. */
  teste?: boolean;
}

/**
 * The bodies of one event's deliveries, one per subscription (architecture §5: id, tipo,
 * versao_do_esquema, entidade_id, ocorrido_em, recebido_em, aplicativo_publicador_id, then
 * assinatura_id, `teste` for a panel's test event, and dados) in this order. The event's part is
 * serialized once and the subscription's id spliced in, so a publication to many subscriptions
 * does not serialize dados again for each. `dadosTexto` goes in as the publisher wrote it: parsing
 * it would round a 20-digit integer. Publication, resend, reprocessing and the worker's sweeper all
 * build bodies here, so a rebuilt job is the job publication wrote.
 */
export function corposDaEntrega(
  evento: CabecaDaEntrega,
  dadosTexto: string,
): (assinaturaId: string, sequencia?: number | null) => string {
  const cabeca = JSON.stringify({
    id: evento.evento_id,
    tipo: evento.tipo,
    versao_do_esquema: evento.versao_do_esquema,
    entidade_id: evento.entidade_id,
    ocorrido_em: evento.ocorrido_em.toISOString(),
    recebido_em: evento.recebido_em.toISOString(),
    aplicativo_publicador_id: evento.aplicativo_publicador_id,
  }).slice(0, -1);
  const cauda = `${evento.teste ? ',"teste":true' : ''},"dados":${dadosTexto}}`;
  // The recipient is signed with the rest: a delivery captured at one subscriber names another. An
  // ordered subscription's delivery says its place among its entity's (docs/decisions/ordered-delivery-per-entity.md); an unordered one's body has no sequencia at all.
  return (assinaturaId, sequencia) =>
    `${cabeca},"assinatura_id":${JSON.stringify(assinaturaId)}${sequencia == null ? '' : `,"sequencia":${sequencia}`}${cauda}`;
}

/** The body of one delivery: corposDaEntrega for a single subscription (and its sequencia, when ordered). */
export const corpoDaEntrega = (
  evento: CabecaDaEntrega,
  assinaturaId: string,
  dadosTexto: string,
  sequencia?: number | null,
): string => corposDaEntrega(evento, dadosTexto)(assinaturaId, sequencia);

// `.v2`: the queues declared before these had no dead-lettering, and RabbitMQ refuses to redeclare
// a queue with other arguments (docs/decisions/queues-with-dead-letters.md).
export const QUEUES = {
  acessoColaboradores: 'access.colaboradores.v2',
  funcaoColaboradores: 'function.colaboradores.v2',
  hubEventosDaPlataforma: 'hub-api.eventos-da-plataforma.v2',
  /** the work queue of delivery jobs */
  entregas: 'delivery-worker.entregas.v2',
  /** the error queue: one message per delivery in `fila_de_erro` (its last job, with why in headers) */
  entregasErro: 'delivery-worker.erro',
} as const;

/**
 * The delivery jobs' own ladder before the one retry ladder (`hub.atraso`, @hub/broker's ladder.ts):
 * a direct exchange routing by name to `delivery-worker.atraso.<ms>ms`, whose TTL sent a job back
 * to the work queue. Its queues are drained and removed at start-up (`migrateOldLadders`).
 */
function oldDeliveryLadder(prefix: string, filaDeEntregas: string): OldLadder {
  return {
    exchange: `${prefix}hub.entregas.atraso`,
    queueName: (stepMs) => `${prefix}delivery-worker.atraso.${stepMs}ms`,
    backTo: () => filaDeEntregas,
  };
}

/**
 * The queue of one isolated destination (architecture §5, "Fair scheduling"): its jobs wait there
 * instead of in the shared work queue while it is held back (paused, circuit open) or backlogged.
 * `chave` is the id of its destino row, stable for the life of the origin.
 */
export const destinationQueueName = (chave: string) => `delivery-worker.destino.${chave}`;
/** The routing key on `hub.entregas` that reaches one isolated destination's queue. */
export const destinationRoutingKey = (chave: string) => `destino.${chave}`;

/** Headers of a job in the error queue: why it is there (the body is the job, unchanged). */
export const ERROR_QUEUE_HEADERS = {
  /** attempts made in the cycle that ended (number) */
  tentativas: 'hub-tentativas',
  /** the last attempt's error or HTTP status, short text */
  ultimoErro: 'hub-ultimo-erro',
  /** `tentativas_esgotadas`, `assinatura_encerrada` (410), `limite_de_entregas` (poison job) */
  motivo: 'hub-motivo',
} as const;

/** The names of the delivery topology: the platform's, or an isolated copy (tests, benchmarks). */
export interface DeliveryTopology {
  /** direct: jobs to the work queue (routing key `trabalhoDeEntrega.routingKey`) */
  entregas: string;
  /** fanout: into the error queue */
  entregasErro: string;
  filaDeEntregas: string;
  filaDeErro: string;
  /** the delivery jobs' ladder of an earlier version, drained at start-up (a job now waits in `hub.atraso`) */
  escadaAntiga: OldLadder;
  /** the queue of one isolated destination (its destino id), bound to `entregas` by `destinationRoutingKey` */
  filaDoDestino: (chave: string) => string;
}

export const DELIVERY_TOPOLOGY: DeliveryTopology = {
  entregas: EXCHANGES.entregas,
  entregasErro: EXCHANGES.entregasErro,
  filaDeEntregas: QUEUES.entregas,
  filaDeErro: QUEUES.entregasErro,
  escadaAntiga: oldDeliveryLadder('', QUEUES.entregas),
  filaDoDestino: destinationQueueName,
};

/**
 * Every name of the delivery topology under a prefix: a copy no other process uses (a test file's
 * worker must not take another test file's jobs). Remove it with `deleteDeliveryTopology`.
 */
export function isolatedDeliveryTopology(prefix: string): DeliveryTopology {
  return {
    entregas: `${prefix}.${EXCHANGES.entregas}`,
    entregasErro: `${prefix}.${EXCHANGES.entregasErro}`,
    filaDeEntregas: `${prefix}.${QUEUES.entregas}`,
    filaDeErro: `${prefix}.${QUEUES.entregasErro}`,
    escadaAntiga: oldDeliveryLadder(`${prefix}.`, `${prefix}.${QUEUES.entregas}`),
    filaDoDestino: (chave) => `${prefix}.${destinationQueueName(chave)}`,
  };
}

/**
 * Deletes an isolated delivery topology (its queues and exchanges), e.g. after a test file;
 * `destinos`: the keys of destinations that may have a queue of their own in it. The retry
 * ladder is the virtual host's, shared, and stays.
 */
export async function deleteDeliveryTopology(
  channel: Channel,
  topology: DeliveryTopology,
  destinos: readonly string[] = [],
): Promise<void> {
  for (const chave of new Set(destinos)) await channel.deleteQueue(topology.filaDoDestino(chave));
  await channel.deleteQueue(topology.filaDeEntregas);
  await channel.deleteQueue(topology.filaDeErro);
  for (const exchange of [topology.entregas, topology.entregasErro]) await channel.deleteExchange(exchange);
}

/**
 * The delivery topology (architecture §5), idempotently:
 * - `hub.entregas` (direct) → the work queue, a quorum queue whose poison jobs (redelivered
 *   DELIVERY_LIMIT times after crashes) are dead-lettered to the error queue;
 * - the retry ladder's steps `delayStepsMs` (@hub/broker's ladder.ts, shared with every consumer):
 *   a job waiting for its next attempt is published there with the work queue as routing key, and
 *   the step's TTL sends it back to that queue;
 * - `hub.entregas.erro` (fanout) → the durable error queue, which nobody consumes: reprocessing
 *   takes jobs out of it.
 * hub-api declares it with no steps at start (a job published before any worker ran is kept); the
 * worker declares it with its DELIVERY_RETRY_DELAYS (the broker declares its consumers' steps as they start).
 */
export async function declareDeliveryTopology(
  channel: Channel,
  delayStepsMs: readonly number[] = [],
  names: DeliveryTopology = DELIVERY_TOPOLOGY,
): Promise<void> {
  await channel.assertExchange(names.entregas, 'direct', { durable: true });
  await channel.assertExchange(names.entregasErro, 'fanout', { durable: true });
  await channel.assertQueue(names.filaDeErro, quorumQueue());
  await channel.bindQueue(names.filaDeErro, names.entregasErro, '');
  await channel.assertQueue(
    names.filaDeEntregas,
    quorumQueue({ deadLetterExchange: names.entregasErro, deliveryLimit: DELIVERY_LIMIT }),
  );
  await channel.bindQueue(names.filaDeEntregas, names.entregas, trabalhoDeEntrega.routingKey);
  await declareRetryLadder(channel, delayStepsMs);
}

/**
 * The queue of one isolated destination, idempotently: a quorum queue like the work queue (poison
 * jobs dead-lettered to the error queue after DELIVERY_LIMIT deliveries, so the reconciliation
 * finds them as it finds the work queue's), bound to the work exchange by its own routing key. A
 * job sent there while nothing is bound (the queue not declared yet, or unbound before its
 * deletion) is returned to a mandatory publisher, who sends it to the shared work queue instead.
 */
export async function declareDestinationQueue(
  channel: Channel,
  chave: string,
  names: DeliveryTopology = DELIVERY_TOPOLOGY,
): Promise<void> {
  const queue = names.filaDoDestino(chave);
  await channel.assertQueue(
    queue,
    quorumQueue({ deadLetterExchange: names.entregasErro, deliveryLimit: DELIVERY_LIMIT }),
  );
  await channel.bindQueue(queue, names.entregas, destinationRoutingKey(chave));
}

/** Deliveries (crashes before the ack) after which a message is dead-lettered instead of delivered again. */
export const DELIVERY_LIMIT = 10;

/** The dead-letter exchange and queue of a consuming queue: where its final failures rest. */
export const deadLetters = (queue: string) => `${queue}.mortas`;

/**
 * A consuming queue of the platform, idempotently: a quorum queue with a delivery limit that
 * dead-letters to `<queue>.mortas` (a fanout exchange and a durable quorum queue), bound to its exchange.
 */
export async function declareConsumingQueue(
  channel: Channel,
  queue: string,
  exchange: string,
  routingKey: string,
): Promise<void> {
  const mortas = deadLetters(queue);
  await channel.assertExchange(mortas, 'fanout', { durable: true });
  await channel.assertQueue(mortas, quorumQueue());
  await channel.bindQueue(mortas, mortas, '');
  try {
    await channel.assertQueue(queue, quorumQueue({ deadLetterExchange: mortas, deliveryLimit: DELIVERY_LIMIT }));
  } catch (error) {
    if ((error as { code?: number }).code !== 406) throw error;
    throw new Error(
      `queue ${queue} exists with other arguments than dead-lettering to ${mortas} with x-delivery-limit ` +
        `${DELIVERY_LIMIT}; drain and delete it, or see docs/decisions/queues-with-dead-letters.md`,
      { cause: error },
    );
  }
  await channel.bindQueue(queue, exchange, routingKey);
}

/** Exchanges and the durable queues of the platform's internal messages. Idempotent. */
export async function declareInternalTopology(channel: Channel): Promise<void> {
  await channel.assertExchange(EXCHANGES.identidade, 'topic', { durable: true });
  await channel.assertExchange(EXCHANGES.acesso, 'fanout', { durable: true });
  await channel.assertExchange(EXCHANGES.eventosDaPlataforma, 'topic', { durable: true });
  for (const [queue, exchange, key] of [
    [QUEUES.acessoColaboradores, EXCHANGES.identidade, '#'],
    [QUEUES.funcaoColaboradores, EXCHANGES.identidade, '#'],
    [QUEUES.hubEventosDaPlataforma, EXCHANGES.eventosDaPlataforma, '#'],
  ] as const) {
    await declareConsumingQueue(channel, queue, exchange, key);
  }
}

export const AREAS = ['aplicativos', 'colaboradores', 'configuracoes', 'monitoramento'] as const;
export type Area = (typeof AREAS)[number];
export const ACOES = ['ler', 'criar', 'editar', 'deletar'] as const;
export type Acao = (typeof ACOES)[number];

export const acoesSchema = z
  .object({
    ler: z.boolean().optional(),
    criar: z.boolean().optional(),
    editar: z.boolean().optional(),
    deletar: z.boolean().optional(),
  })
  .strict();
export type Acoes = z.infer<typeof acoesSchema>;

export const permissoesSchema = z
  .object({
    aplicativos: acoesSchema.optional(),
    colaboradores: acoesSchema.optional(),
    configuracoes: acoesSchema.optional(),
    monitoramento: acoesSchema.optional(),
  })
  .strict();
export type Permissoes = z.infer<typeof permissoesSchema>;

/** GET /auth/acesso: who the caller is and what they may do. */
export const acessoAtualSchema = z.object({
  id: z.string(),
  email: z.string(),
  nome: z.string(),
  perfil: z.string(),
  master: z.boolean(),
  perfil_acesso: z.string().nullable().optional(),
  permissoes: permissoesSchema,
});
export type AcessoAtual = z.infer<typeof acessoAtualSchema>;

/** Every action of every area set to true: what a master holds. */
export const todasAsPermissoes = (): Required<{ [A in Area]: Required<Acoes> }> =>
  Object.fromEntries(AREAS.map((area) => [area, { ler: true, criar: true, editar: true, deletar: true }])) as never;

export { CLOUDEVENTS_CONTENT_TYPE, corpoCloudEvents, urlDoEsquemaEm } from './cloudevents';

export { deliveryRetryDelaysFromEnv, migrarEscadasAntigas } from './escada';
