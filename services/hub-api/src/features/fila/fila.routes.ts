import type { Guards } from '@hub/auth';
import { ApiRouter } from '@hub/http';
import { z } from 'zod';
import type { ConciliacaoDaFilaDeErro } from './conciliacao';
import type { FilasDaTopologia } from './fila.service';
import { filaSchema, nomeParams, olharDaFilaSchema, olharQuery, resultadoDaConciliacaoSchema } from './fila.schemas';
import { CONCILIACAO_RETRY_AFTER_S } from './trava';

const tag = 'Fila';

/** The operators' routes of the delivery queues (architecture §4, Fila). */
export interface FilaRoutesDeps {
  filas: FilasDaTopologia;
  conciliacao: ConciliacaoDaFilaDeErro;
  guards: Guards;
}

export function filaRoutes({ filas, conciliacao, guards }: FilaRoutesDeps): ApiRouter {
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
        query: olharQuery,
        response: olharDaFilaSchema,
        refusals: {
          409:
            'fila_sem_inspecao: a queue of the topology other than the error queue; ' +
            `conciliacao_em_andamento: a reconciliation is reading the error queue, look again after Retry-After (${CONCILIACAO_RETRY_AFTER_S} s)`,
        },
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
        refusals: {
          409:
            'conciliacao_em_andamento: another hub-api instance is running a pass, ask again after Retry-After ' +
            `(${CONCILIACAO_RETRY_AFTER_S} s; a call while this instance runs one waits for the next pass instead); ` +
            'leitura_em_andamento: looks at the error queue kept it for 30 s',
        },
      },
      // A pass under way here is joined (its successor answers); one under way elsewhere is refused.
      () => conciliacao.conciliar({ seOutraInstanciaConcilia: 'recusar' }),
    );
}
