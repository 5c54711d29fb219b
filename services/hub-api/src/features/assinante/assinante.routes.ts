import type { Guarded } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import { currentRequestId } from '@hub/log';
import type { RequestHandler } from 'express';
import { aplicativoDaRequisicao } from '../../auth/usuario-ou-aplicativo';
import { withRateLimit } from '../../rate-limit';
import { paginaAssinatura } from '../assinaturas/assinaturas.schemas';
import { entregaDetalhadaSchema, paginaEntrega } from '../entregas/entregas.schemas';
import { assinaturasDoAssinanteQuery, entregasDoAssinanteQuery } from './assinante.schemas';
import type { AssinanteService } from './assinante.service';

const refusals = {
  401: 'missing or invalid token, or a token that is not an application’s (tipo_de_token_invalido: a panel user’s token)',
  403: 'the application of the token is not registered in the hub (aplicativo_nao_registrado) or is switched off (aplicativo_inativo)',
  404: 'no such delivery or subscription among the application’s own (another application’s is not found either)',
  503: 'sobrecarregado: this instance has HUB_CONSULTAS_DE_APLICATIVOS_EM_ANDAMENTO of these requests under way; nothing was done, send it again after Retry-After',
};

export interface AssinanteRoutesDeps {
  service: AssinanteService;
  /** The token of a registered, active application (`aplicativoRegistrado`). */
  aplicativo: Guarded;
  /** Admission control of these four routes, counted together (see `admission` of @hub/http). */
  admission?: RequestHandler;
  /** The resends' own budget per application (`rateLimitPerApplication`), ahead of the admission. */
  reenvios?: RequestHandler;
}

/**
 * The subscribing application's own routes: its deliveries (read, resend) and its subscriptions,
 * answered as the panel's /entrega and /assinatura answer them.
 */
export function assinanteRoutes({ service, aplicativo, admission, reenvios }: AssinanteRoutesDeps): ApiRouter {
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/entregas',
        operationId: 'listarEntregasDoAplicativo',
        summary:
          'The deliveries of the subscriptions of the application of the token, newest first, a page at a time; every filter given must match (an assinatura_id not its own: 404)',
        tag: 'Entregas',
        ...aplicativo,
        admission,
        query: entregasDoAssinanteQuery,
        response: paginaEntrega,
        refusals,
      },
      ({ res, query }) => service.listarEntregas(aplicativoDaRequisicao(res), query),
    )
    .route(
      {
        method: 'get',
        path: '/entregas/:id',
        operationId: 'obterEntregaDoAplicativo',
        summary: 'One delivery of the application of the token, with every attempt made, oldest first',
        tag: 'Entregas',
        ...aplicativo,
        admission,
        params: idParams,
        response: entregaDetalhadaSchema,
        refusals,
      },
      ({ res, params }) => service.buscarEntrega(aplicativoDaRequisicao(res), params.id),
    )
    .route(
      {
        method: 'post',
        path: '/entregas/:id/reenviar',
        operationId: 'reenviarEntregaDoAplicativo',
        summary:
          'A new cycle for one delivery of the application of the token (concluida, fila_de_erro or cancelada), as the panel’s resend: pendente, tentativas_no_ciclo_atual 0, its job queued',
        tag: 'Entregas',
        ...aplicativo,
        admission: reenvios ? withRateLimit(reenvios, admission) : admission,
        params: idParams,
        status: 202,
        response: entregaDetalhadaSchema,
        refusals: {
          ...refusals,
          429: 'muitas_requisicoes: more than HUB_REENVIOS_POR_MINUTO resends this minute from the application, in this instance; nothing was done, send it again after Retry-After',
          409: 'entrega_em_andamento: the delivery is still in the queue (pendente, em_andamento, aguardando_nova_tentativa); assinatura_inativa: its subscription is switched off or deleted',
        },
      },
      ({ res, params }) => service.reenviarEntrega(aplicativoDaRequisicao(res), params.id, currentRequestId() ?? null),
    )
    .route(
      {
        method: 'get',
        path: '/assinaturas',
        operationId: 'listarAssinaturasDoAplicativo',
        summary: 'The subscriptions of the application of the token, by type name and version, a page at a time',
        tag: 'Assinaturas',
        ...aplicativo,
        admission,
        query: assinaturasDoAssinanteQuery,
        response: paginaAssinatura,
        refusals,
      },
      ({ res, query }) => service.listarAssinaturas(aplicativoDaRequisicao(res), query),
    );
}
