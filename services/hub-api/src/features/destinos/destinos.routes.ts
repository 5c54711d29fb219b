import type { Guards } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import { destinoAtualizar, destinoSchema, listaDeDestinosQuery, paginaDestino } from './destinos.schemas';
import type { DestinosService } from './destinos.service';

const tag = 'Destino';

export function destinosRoutes({ service, guards }: { service: DestinosService; guards: Guards }): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  const editar = guards.permission('monitoramento', 'editar');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/destino',
        summary: 'Destination origins in alphabetical order, a page at a time, with their limits and last hour',
        tag,
        ...ler,
        query: listaDeDestinosQuery,
        response: paginaDestino,
      },
      ({ query }) => service.listar(query),
    )
    .route(
      {
        method: 'get',
        path: '/destino/:id',
        summary: 'One destination origin: subscriptions, attempts in flight, limits, pause, the last hour',
        tag,
        ...ler,
        params: idParams,
        response: destinoSchema,
      },
      ({ params }) => service.buscar(params.id),
    )
    .route(
      {
        method: 'patch',
        path: '/destino/:id',
        summary: 'Set the concurrency and the per-second limit of a destination (every worker obeys within seconds)',
        tag,
        ...editar,
        params: idParams,
        body: destinoAtualizar,
        response: destinoSchema,
      },
      ({ params, body }) => service.atualizar(params.id, body),
    )
    .route(
      {
        method: 'post',
        path: '/destino/:id/pausar',
        summary: 'Pause deliveries to a destination: they wait, nothing is lost or counted as a failed attempt',
        tag,
        ...editar,
        params: idParams,
        response: destinoSchema,
      },
      ({ params }) => service.pausar(params.id),
    )
    .route(
      {
        method: 'post',
        path: '/destino/:id/retomar',
        summary: 'Resume deliveries to a paused destination',
        tag,
        ...editar,
        params: idParams,
        response: destinoSchema,
      },
      ({ params }) => service.retomar(params.id),
    )
    .route(
      {
        method: 'post',
        path: '/destino/:id/fechar-circuito',
        summary:
          'Close the circuit of a destination by hand: its deliveries are attempted again within seconds (a closed circuit stays as it is)',
        tag,
        ...editar,
        params: idParams,
        response: destinoSchema,
      },
      ({ params, req }) => service.fecharCircuito(params.id, req.usuario?.email ?? null),
    );
}
