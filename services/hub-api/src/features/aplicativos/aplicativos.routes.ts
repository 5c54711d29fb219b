import type { Guards } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import type { AplicativosService } from './aplicativos.service';
import {
  aplicativoAtualizar,
  aplicativoCriar,
  aplicativoSchema,
  listaQuery,
  paginaAplicativo,
} from './aplicativos.schemas';

const tag = 'Aplicativo';

export function aplicativosRoutes({ service, guards }: { service: AplicativosService; guards: Guards }): ApiRouter {
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/aplicativo',
        summary: 'Applications by name, a page at a time (busca: name or client_id; ativo)',
        tag,
        ...guards.permission('monitoramento', 'ler'),
        query: listaQuery,
        response: paginaAplicativo,
      },
      ({ query: { pagina, tamanho, ...filtro } }) => service.listar(filtro, { pagina, tamanho }),
    )
    .route(
      {
        method: 'post',
        path: '/aplicativo',
        summary: 'Register an application by the client id of its tokens',
        tag,
        ...guards.permission('monitoramento', 'criar'),
        body: aplicativoCriar,
        response: aplicativoSchema,
        status: 201,
        refusals: { 409: 'an application with this client_id exists' },
      },
      ({ body }) => service.criar(body),
    )
    .route(
      {
        method: 'get',
        path: '/aplicativo/:id',
        summary: 'One application',
        tag,
        ...guards.permission('monitoramento', 'ler'),
        params: idParams,
        response: aplicativoSchema,
      },
      ({ params }) => service.buscar(params.id),
    )
    .route(
      {
        method: 'patch',
        path: '/aplicativo/:id',
        summary: 'Rename an application or switch it off and on (client_id never changes)',
        tag,
        ...guards.permission('monitoramento', 'editar'),
        params: idParams,
        body: aplicativoAtualizar,
        response: aplicativoSchema,
      },
      ({ params, body }) => service.atualizar(params.id, body),
    );
}
