import type { Guarded, Guards } from '@hub/auth';
import { ApiRouter, idParams, pageQuery } from '@hub/http';
import type { RequestHandler } from 'express';
import { aplicativoDaRequisicao } from '../../auth/usuario-ou-aplicativo';
import { withRateLimit } from '../../rate-limit';
import { LISTA_MAX } from '../../schemas';
import { paginaReproducao, reproducaoCriar, reproducaoSchema, reproducoesQuery } from './reproducao.schemas';
import type { ReproducaoService } from './reproducao.service';

const tag = 'Reprodução';
const paginaQuery = pageQuery({ maxTamanho: LISTA_MAX });
const aoPedir = {
  409: 'assinatura_inativa: the subscription is switched off or deleted',
  422: 'the body breaks a rule (desde after ate, not RFC 3339, an unknown field), or reproducao_grande_demais: the range holds more than REPLAY_MAX_EVENTS stored events',
};

/** The panel's replay routes: ask for one on any subscription, read them, cancel one. */
export function reproducaoRoutes({ service, guards }: { service: ReproducaoService; guards: Guards }): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  const criar = guards.permission('monitoramento', 'criar');
  return new ApiRouter()
    .route(
      {
        method: 'post',
        path: '/assinatura/:id/reproduzir',
        operationId: 'reproduzirAssinatura',
        summary:
          'Replay the stored events of the subscription’s type and version received in [desde, ate] that its current filter takes: a delivery for each event without one, a new cycle for those with one when incluir_entregues; in batches in the background',
        tag,
        ...criar,
        params: idParams,
        body: reproducaoCriar,
        status: 202,
        response: reproducaoSchema,
        refusals: { 404: 'no such subscription', ...aoPedir },
      },
      ({ params, body, req }) => service.solicitar(params.id, body, { email: req.usuario?.email ?? '' }),
    )
    .route(
      {
        method: 'get',
        path: '/reproducao',
        summary: 'Replays, newest first, a page at a time, with their progress; assinatura_id: one subscription’s',
        tag,
        ...ler,
        query: reproducoesQuery,
        response: paginaReproducao,
      },
      ({ query }) => service.listar(query),
    )
    .route(
      {
        method: 'get',
        path: '/reproducao/:id',
        summary: 'One replay: situacao, quantidade_de_eventos, criadas, reenviadas, ignoradas',
        tag,
        ...ler,
        params: idParams,
        response: reproducaoSchema,
      },
      ({ params }) => service.buscar(params.id),
    )
    .route(
      {
        method: 'post',
        path: '/reproducao/:id/cancelar',
        operationId: 'cancelarReproducao',
        summary: 'Cancel a replay: it stops at its next batch (situacao cancelada); what it delivered stays',
        tag,
        ...criar,
        params: idParams,
        response: reproducaoSchema,
        refusals: { 409: 'reproducao_encerrada: it concluded or was cancelled already' },
      },
      ({ params }) => service.cancelar(params.id),
    );
}

export interface ReproducaoDoAssinanteDeps {
  service: ReproducaoService;
  /** The token of a registered, active application (`aplicativoRegistrado`). */
  aplicativo: Guarded;
  /** The subscriber routes' admission control, shared with /entregas and /assinaturas. */
  admission?: RequestHandler;
  /** The replays' own budget per application (HUB_REPRODUCOES_POR_MINUTO), ahead of the admission. */
  orcamento?: RequestHandler;
}

const doAplicativo = {
  401: 'missing or invalid token, or a token that is not an application’s (tipo_de_token_invalido)',
  403: 'the application of the token is not registered in the hub or is switched off',
  404: 'no such subscription among the application’s own (another application’s is not found either)',
};

/** The subscribing application's own replays: on its own subscriptions only (another's is 404). */
export function reproducaoDoAssinanteRoutes(deps: ReproducaoDoAssinanteDeps): ApiRouter {
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/assinaturas/:id/reproducoes',
        operationId: 'reproducoesDaAssinaturaDoAplicativo',
        summary:
          'The replays of a subscription of the application of the token, newest first, a page at a time, with their progress',
        tag: 'Assinaturas',
        ...deps.aplicativo,
        admission: deps.admission,
        params: idParams,
        query: paginaQuery,
        response: paginaReproducao,
        refusals: doAplicativo,
      },
      ({ params, query, res }) => deps.service.listarDoAplicativo(params.id, aplicativoDaRequisicao(res), query),
    )
    .route(
      {
        method: 'post',
        path: '/assinaturas/:id/reproduzir',
        operationId: 'reproduzirAssinaturaDoAplicativo',
        summary:
          'Replay, to a subscription of the application of the token, the stored events received in [desde, ate] that its filter takes, as the panel’s replay does',
        tag: 'Assinaturas',
        ...deps.aplicativo,
        admission: deps.orcamento ? withRateLimit(deps.orcamento, deps.admission) : deps.admission,
        params: idParams,
        body: reproducaoCriar,
        status: 202,
        response: reproducaoSchema,
        refusals: {
          ...doAplicativo,
          429: 'muitas_requisicoes: more than HUB_REPRODUCOES_POR_MINUTO replays this minute from the application, in this instance; nothing was done, send it again after Retry-After',
          ...aoPedir,
        },
      },
      ({ params, body, req, res }) =>
        deps.service.solicitar(params.id, body, {
          aplicativoId: aplicativoDaRequisicao(res),
          clientId: req.aplicativo?.sub ?? '',
        }),
    );
}
