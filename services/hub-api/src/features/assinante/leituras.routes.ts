import type { Guarded } from '@hub/auth';
import { ApiRouter, idParams, type PageRequest } from '@hub/http';
import type { RequestHandler } from 'express';
import { aplicativoDaRequisicao } from '../../auth/usuario-ou-aplicativo';
import { testarFiltroCorpo, testarFiltroResposta } from '../assinaturas/filtro.schemas';
import { catalogoQuery, paginaDeTiposOferecidos } from './catalogo';
import { type SaudeDaAssinatura, saudeDaAssinaturaSchema } from './saude';

const refusals = {
  401: 'missing or invalid token, or a token that is not an application’s or a portal link’s',
  403: 'the application of the token is not registered in the hub (aplicativo_nao_registrado) or is switched off (aplicativo_inativo)',
  503: 'sobrecarregado: this instance has HUB_CONSULTAS_DE_APLICATIVOS_EM_ANDAMENTO requests of applications under way',
};

export interface LeiturasDoAssinanteDeps {
  aplicativo: Guarded;
  admission?: RequestHandler;
  catalogo: (request: PageRequest) => Promise<unknown>;
  saude: (aplicativoId: string, assinaturaId: string) => Promise<SaudeDaAssinatura>;
  /** The panel's POST /assinatura/testar-filtro: the same grammar, nothing written. */
  testarFiltro: (input: { filtro?: unknown; dados: unknown; entidade_id?: string | undefined }) => unknown;
}

/** What a subscribing application (its portal above all) reads to choose and watch its subscriptions. */
export function leiturasDoAssinanteRoutes(deps: LeiturasDoAssinanteDeps) {
  const { aplicativo, admission, catalogo, saude } = deps;
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/tipos-de-evento',
        operationId: 'listarTiposDeEventoOferecidos',
        summary:
          'The event types any application may subscribe to: the active ones by name, with their versions switched on, each with its JSON Schema and an example delivery body',
        tag: 'Assinaturas',
        ...aplicativo,
        admission,
        query: catalogoQuery,
        response: paginaDeTiposOferecidos,
        refusals,
      },
      ({ query }) => catalogo(query),
    )
    .route(
      {
        method: 'get',
        path: '/assinaturas/:id/saude',
        operationId: 'obterSaudeDaAssinaturaDoAplicativo',
        summary:
          'The health of one of the application’s subscriptions: its attempts and failures of the last 24 hours, and its destination’s circuit, pause and p50/p99 latency',
        tag: 'Assinaturas',
        ...aplicativo,
        admission,
        params: idParams,
        response: saudeDaAssinaturaSchema,
        refusals: { ...refusals, 404: 'no such subscription among the application’s own' },
      },
      ({ res, params }) => saude(aplicativoDaRequisicao(res), params.id),
    )
    .route(
      {
        method: 'post',
        path: '/assinaturas/testar-filtro',
        operationId: 'testarFiltroDoAplicativo',
        summary:
          'Whether a content filter matches the delivery body { entidade_id, dados }, as the panel’s POST /assinatura/testar-filtro (nothing is written; a null filter matches)',
        tag: 'Assinaturas',
        ...aplicativo,
        admission,
        body: testarFiltroCorpo,
        response: testarFiltroResposta,
        refusals: {
          ...refusals,
          422: 'the body breaks a rule, or the filter is invalid (filtro_invalido, with its caminho)',
        },
      },
      ({ body }) => deps.testarFiltro(body),
    );
}
