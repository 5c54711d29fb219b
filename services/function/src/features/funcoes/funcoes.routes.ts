import type { Guards } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import type { FuncoesService } from './funcoes.service';
import {
  autocompleteQuery,
  filtroQuery,
  funcaoAtualizar,
  funcaoCriar,
  funcaoSchema,
  listaQuery,
  paginaFuncao,
  paginaFuncaoAutoComplete,
} from './funcoes.schemas';

const tag = 'Função';

/** Area B: every route is for a master of the identity service only. */
export function funcoesRoutes({ service, guards }: { service: FuncoesService; guards: Guards }): ApiRouter {
  const master = guards.master();
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/funcao',
        summary: 'Functions, alphabetical, a page at a time',
        tag,
        ...master,
        query: listaQuery,
        response: paginaFuncao,
      },
      ({ query: { busca, pagina, tamanho } }) => service.listar(busca, { pagina, tamanho }),
    )
    .route(
      {
        method: 'post',
        path: '/funcao',
        summary: 'Create a function',
        tag,
        ...master,
        body: funcaoCriar,
        response: funcaoSchema,
        status: 201,
        refusals: { 409: 'a function with this name (compared without regard to case) exists' },
      },
      ({ body }) => service.criar(body.nome),
    )
    .route(
      {
        method: 'get',
        path: '/funcao/autocomplete',
        summary: 'Ids and names of functions, alphabetical',
        tag,
        ...master,
        query: autocompleteQuery,
        response: paginaFuncaoAutoComplete,
      },
      ({ query: { busca, pagina, tamanho } }) => service.autocomplete(busca, { pagina, tamanho }),
    )
    .route(
      {
        method: 'get',
        path: '/funcao/filtro',
        summary: 'Every matching function, alphabetical, without pages',
        tag,
        ...master,
        query: filtroQuery,
      },
      ({ query }) => service.filtrar(query.busca),
    )
    .route(
      {
        method: 'get',
        path: '/funcao/:id',
        summary: 'One function',
        tag,
        ...master,
        params: idParams,
        response: funcaoSchema,
      },
      ({ params }) => service.buscar(params.id),
    )
    .route(
      {
        method: 'patch',
        path: '/funcao/:id',
        summary: 'Rename a function; its collaborators are announced again with the new name',
        tag,
        ...master,
        params: idParams,
        body: funcaoAtualizar,
        response: funcaoSchema,
        refusals: { 409: 'a function with this name (compared without regard to case) exists' },
      },
      ({ params, body }) => service.atualizar(params.id, body.nome),
    );
}
