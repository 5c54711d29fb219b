import type { Guards } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import { currentRequestId } from '@hub/log';
import { z } from 'zod';
import { entregaSchema } from '../eventos/eventos.schemas';
import {
  entregaDetalhadaSchema,
  FILTRO_ENTREGAS_MAX,
  filtroDeEntregasQuery,
  listaDeEntregasQuery,
  paginaEntrega,
} from './entregas.schemas';
import type { EntregasService } from './entregas.service';

const tag = 'Entrega';

/** The panel's deliveries (architecture §4). /entrega/filtro is registered before /entrega/{id}. */
export function entregasRoutes({ service, guards }: { service: EntregasService; guards: Guards }): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/entrega',
        summary: 'Deliveries, newest first, a page at a time; every filter given must match',
        tag,
        ...ler,
        query: listaDeEntregasQuery,
        response: paginaEntrega,
      },
      ({ query }) => service.listar(query),
    )
    .route(
      {
        method: 'get',
        path: '/entrega/filtro',
        summary: `Deliveries matching every filter given (exact; desde and ate inclusive), newest first, at most ${FILTRO_ENTREGAS_MAX}`,
        tag,
        ...ler,
        query: filtroDeEntregasQuery,
        response: z.array(entregaSchema),
      },
      ({ query }) => service.filtrar(query),
    )
    .route(
      {
        method: 'get',
        path: '/entrega/:id',
        summary: 'One delivery with every attempt made, oldest first',
        tag,
        ...ler,
        params: idParams,
        response: entregaDetalhadaSchema,
      },
      ({ params }) => service.buscar(params.id),
    )
    .route(
      {
        method: 'post',
        path: '/entrega/:id/reenviar',
        summary:
          'A new cycle for one delivery (concluida, fila_de_erro or cancelada): pendente, tentativas_no_ciclo_atual 0, its job queued; it leaves the error queue',
        tag,
        ...guards.permission('monitoramento', 'editar'),
        params: idParams,
        status: 202,
        response: entregaDetalhadaSchema,
        refusals: {
          409: 'entrega_em_andamento: the delivery is still in the queue (pendente, em_andamento, aguardando_nova_tentativa); assinatura_inativa: its subscription is switched off or deleted',
        },
      },
      ({ params }) => service.reenviar(params.id, currentRequestId() ?? null),
    );
}
