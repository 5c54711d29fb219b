import type { Guards } from '@hub/auth';
import { ApiRouter, clampedInt } from '@hub/http';
import { z } from 'zod';
import type { ConciliacaoDaFilaDeErro } from './conciliacao';
import type { FilasDaTopologia } from './filas';
import { SITUACOES } from '../eventos/eventos.schemas';

const tag = 'Fila';

const n = (description: string) => z.number().int().describe(description);

export const resultadoDaConciliacaoSchema = z.object({
  mensagens_examinadas: n('messages read from the error queue (those present when the pass began)'),
  mensagens_mantidas: n('messages of deliveries in fila_de_erro, kept'),
  removidas_sem_entrega: n('removed: their delivery no longer exists (retention)'),
  removidas_fora_da_fila_de_erro: n('removed: their delivery left fila_de_erro (reprocessed, resent, concluded)'),
  removidas_duplicadas: n('removed: a second message of one delivery'),
  entregas_marcadas_fila_de_erro: n(
    'deliveries stuck in the queue whose job the work queue dead-lettered as poison: now fila_de_erro',
  ),
  mensagens_em_espera: n('poison jobs whose delivery moved recently: kept, decided on a later pass'),
  mensagens_ilegiveis: n('messages that are not a delivery job: kept for an operator'),
  entregas_republicadas: n('deliveries in fila_de_erro without a message: their job rebuilt and published'),
  iniciada_em: z.string(),
  concluida_em: z.string(),
});

export const filaSchema = z.object({
  nome: z.string(),
  papel: z
    .enum(['trabalho', 'atraso', 'erro', 'destino'])
    .describe(
      'the shared work queue, a retry delay step, the error queue, or the queue of one destination held back or backlogged (its jobs wait there instead of in the work queue)',
    ),
  origem: z
    .string()
    .nullable()
    .describe('the destination origin whose jobs wait in the queue (papel destino; null for the others)'),
  mensagens: n('messages in the queue now (ready, not yet taken)'),
  consumidores: n('consumers attached now'),
  declarada: z.boolean().describe('false while nobody declared it yet (a delay queue before the first worker started)'),
});

const nomeParams = z.object({ nome: z.string().min(1).max(255) });

const texto = (description: string) => z.string().nullable().describe(description);

export const olharDaFilaSchema = z.object({
  fila: z.string(),
  mensagens_na_fila: n('messages in the queue when the look began'),
  itens: z.array(
    z.object({
      legivel: z.boolean().describe('false when the body is not a delivery job (its delivery fields are then null)'),
      entrega_id: texto("the delivery (the job's message id)"),
      evento_id: texto('its event'),
      assinatura_id: texto('its subscription'),
      url_de_destino: texto('where its last cycle POSTed'),
      tentativas: z.number().int().nullable().describe('attempts of the cycle that ended'),
      ultimo_erro: texto("the last attempt's error or HTTP status"),
      motivo: texto('tentativas_esgotadas, assinatura_encerrada (410), limite_de_entregas (poison job) or conciliacao'),
      situacao_da_entrega: z
        .enum(SITUACOES)
        .nullable()
        .describe(
          'the delivery now; anything but fila_de_erro (or null: erased) is a difference the reconciliation removes',
        ),
    }),
  ),
});

/** The operators' routes of the delivery queues (architecture §4, Fila). */
export function filaRoutes(filas: FilasDaTopologia, conciliacao: ConciliacaoDaFilaDeErro, guards: Guards): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/fila',
        summary:
          "Every queue of the delivery topology (work, delay steps, error, and each destination's own queue) with its messages and consumers",
        tag,
        ...ler,
        response: z.array(filaSchema),
        refusals: { 503: 'broker_indisponivel: RabbitMQ is not answering; send the request again after Retry-After' },
      },
      () => filas.listar(),
    )
    .route(
      {
        method: 'get',
        path: '/fila/:nome',
        summary: 'One queue of the delivery topology by name',
        tag,
        ...ler,
        params: nomeParams,
        response: filaSchema,
        refusals: { 503: 'broker_indisponivel: RabbitMQ is not answering; send the request again after Retry-After' },
      },
      ({ params }) => filas.buscar(params.nome),
    )
    .route(
      {
        method: 'get',
        path: '/fila/:nome/mensagens',
        summary:
          'Looks at up to `limite` messages of the error queue without taking them out (each look shows the next ones); the work and delay queues answer 409 fila_sem_inspecao',
        tag,
        ...ler,
        params: nomeParams,
        query: z.object({ limite: clampedInt(20, 100) }),
        response: olharDaFilaSchema,
        refusals: { 409: 'a queue of the topology other than the error queue (fila_sem_inspecao)' },
      },
      ({ params, query }) => filas.espiar(params.nome, query.limite),
    )
    .route(
      {
        method: 'post',
        path: '/fila/erro/conciliar',
        operationId: 'conciliarFilaDeErro',
        summary:
          'Compares the error queue with the deliveries in fila_de_erro and repairs the queue (one message per delivery), answering what it found and fixed',
        tag,
        ...guards.permission('monitoramento', 'editar'),
        response: resultadoDaConciliacaoSchema,
      },
      () => conciliacao.conciliar(),
    );
}
