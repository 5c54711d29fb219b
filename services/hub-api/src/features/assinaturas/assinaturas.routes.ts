import type { Guards } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import type { Request } from 'express';
import { z } from 'zod';
import type { Autor } from './autoria';
import type { AssinaturasService } from './assinaturas.service';
import {
  assinaturaAtualizar,
  assinaturaCriar,
  assinaturaSchema,
  autocompleteQuery,
  filtroQuery,
  listaQuery,
  paginaAssinatura,
  paginaAssinaturaAutoComplete,
} from './assinaturas.schemas';
import { testarFiltroCorpo, testarFiltroResposta } from './filtro.schemas';

const tag = 'Assinatura';
const destino = {
  422: 'the body breaks a rule, the filter is invalid (filtro_invalido, with the caminho of the offending part), a reference does not exist, or the destination is forbidden (destino_proibido), does not resolve (destino_nao_resolvido) or is not https in SANDBOX and PRODUCTION (https_obrigatorio, unless DESTINATION_ALLOW_HTTP)',
};

/** The operator behind a panel write: the e-mail of the signed-in user the guards let through. */
const operador = (req: Request): Autor => ({ tipo: 'operador', quem: req.usuario!.email });

export function assinaturasRoutes({ service, guards }: { service: AssinaturasService; guards: Guards }): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/assinatura',
        summary: 'Subscriptions by type name and version, a page at a time',
        tag,
        ...ler,
        query: listaQuery,
        response: paginaAssinatura,
      },
      ({ query: { pagina, tamanho, ...filtro } }) => service.listar(filtro, { pagina, tamanho }),
    )
    .route(
      {
        method: 'post',
        path: '/assinatura',
        summary: 'Subscribe an application to a type and schema version at a URL (maximo_de_tentativas default 8)',
        tag,
        ...guards.permission('monitoramento', 'criar'),
        body: assinaturaCriar,
        response: assinaturaSchema,
        status: 201,
        refusals: { 409: 'the same subscription exists', ...destino },
      },
      ({ body, req }) => service.criar(body, operador(req)),
    )
    .route(
      {
        method: 'get',
        path: '/assinatura/filtro',
        summary: 'Every matching subscription (at most 1000), without pages',
        tag,
        ...ler,
        query: filtroQuery,
        response: z.array(assinaturaSchema),
      },
      ({ query }) => service.filtrar(query),
    )
    .route(
      {
        method: 'post',
        path: '/assinatura/testar-filtro',
        operationId: 'testarFiltroDeAssinatura',
        summary:
          'Whether a content filter matches the delivery body { entidade_id, dados } (nothing is written; a null filter matches)',
        tag,
        ...ler,
        body: testarFiltroCorpo,
        response: testarFiltroResposta,
        refusals: { 422: 'the body breaks a rule, or the filter is invalid (filtro_invalido, with its caminho)' },
      },
      ({ body }) => service.testarFiltro(body),
    )
    .route(
      {
        method: 'get',
        path: '/assinatura/autocomplete',
        summary: 'Short subscriptions (busca: URL, subscriber or type name)',
        tag,
        ...ler,
        query: autocompleteQuery,
        response: paginaAssinaturaAutoComplete,
      },
      ({ query: { pagina, tamanho, ...filtro } }) => service.autocomplete(filtro, { pagina, tamanho }),
    )
    .route(
      {
        method: 'get',
        path: '/assinatura/:id',
        summary: 'One subscription',
        tag,
        ...ler,
        params: idParams,
        response: assinaturaSchema,
      },
      ({ params }) => service.buscar(params.id),
    )
    .route(
      {
        method: 'patch',
        path: '/assinatura/:id',
        summary:
          'Change the URL, the attempts or the content filter (null removes it) of a subscription, or switch it off and on',
        tag,
        ...guards.permission('monitoramento', 'editar'),
        params: idParams,
        body: assinaturaAtualizar,
        response: assinaturaSchema,
        refusals: { 409: 'the same subscription exists', ...destino },
      },
      ({ params, body, req }) => service.atualizar(params.id, body, operador(req)),
    )
    .route(
      {
        method: 'delete',
        path: '/assinatura/:id',
        summary:
          'Delete a subscription: its deliveries waiting for an attempt or in the error queue are cancelled (past deliveries are kept)',
        tag,
        ...guards.permission('monitoramento', 'deletar'),
        params: idParams,
      },
      ({ params, req }) => service.excluir(params.id, operador(req)),
    );
}
