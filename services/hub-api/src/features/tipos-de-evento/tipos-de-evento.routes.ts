import type { Guards } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import { z } from 'zod';
import type { TiposService } from './tipos-de-evento.service';
import {
  autocompleteQuery,
  filtroQuery,
  listaQuery,
  paginaTipo,
  paginaTipoAutoComplete,
  tipoAtualizar,
  tipoCriar,
  tipoSchema,
} from './tipos-de-evento.schemas';

const tag = 'Tipo de evento';

export function tiposRoutes({ service, guards }: { service: TiposService; guards: Guards }): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/tipo-de-evento',
        summary: 'Event types by name, a page at a time',
        tag,
        ...ler,
        query: listaQuery,
        response: paginaTipo,
      },
      ({ query: { pagina, tamanho, ...filtro } }) => service.listar(filtro, { pagina, tamanho }),
    )
    .route(
      {
        method: 'post',
        path: '/tipo-de-evento',
        summary:
          'Create an event type owned by an application (retencao_em_dias default 30, compatibilidade default none)',
        tag,
        ...guards.permission('monitoramento', 'criar'),
        body: tipoCriar,
        response: tipoSchema,
        status: 201,
        refusals: {
          409: 'an event type with this name exists',
          422: 'the body breaks a rule, or the application does not exist',
        },
      },
      ({ body }) => service.criar(body),
    )
    .route(
      {
        method: 'get',
        path: '/tipo-de-evento/autocomplete',
        summary: 'Ids and names of event types',
        tag,
        ...ler,
        query: autocompleteQuery,
        response: paginaTipoAutoComplete,
      },
      ({ query: { pagina, tamanho, ...filtro } }) => service.autocomplete(filtro, { pagina, tamanho }),
    )
    .route(
      {
        method: 'get',
        path: '/tipo-de-evento/filtro',
        summary: 'Every matching event type (at most 1000), by name, without pages',
        tag,
        ...ler,
        query: filtroQuery,
        response: z.array(tipoSchema),
      },
      ({ query: { nome, ...filtro } }) => service.filtrar({ busca: nome, ...filtro }),
    )
    .route(
      {
        method: 'get',
        path: '/tipo-de-evento/:id',
        summary: 'One event type',
        tag,
        ...ler,
        params: idParams,
        response: tipoSchema,
      },
      ({ params }) => service.buscar(params.id),
    )
    .route(
      {
        method: 'patch',
        path: '/tipo-de-evento/:id',
        summary:
          'Describe, switch off and on, or change the retention or the compatibility rule of an event type (a new rule applies to the next schema version, even when the stored versions break it)',
        tag,
        ...guards.permission('monitoramento', 'editar'),
        params: idParams,
        body: tipoAtualizar,
        response: tipoSchema,
      },
      ({ params, body }) => service.atualizar(params.id, body),
    )
    .route(
      {
        method: 'delete',
        path: '/tipo-de-evento/:id',
        summary: 'Delete an event type that nothing refers to',
        tag,
        ...guards.permission('monitoramento', 'deletar'),
        params: idParams,
        refusals: { 409: 'schema versions, subscriptions or events refer to the type' },
      },
      ({ params }) => service.excluir(params.id),
    );
}
