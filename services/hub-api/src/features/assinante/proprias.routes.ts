import type { Guarded } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import type { Request, RequestHandler, Response } from 'express';
import { aplicativoDaRequisicao } from '../../auth/usuario-ou-aplicativo';
import { withRateLimit } from '../../rate-limit';
import { assinaturaAtualizar, assinaturaCriar, assinaturaSchema } from '../assinaturas/assinaturas.schemas';
import type { AssinaturasPropriasService } from './proprias.service';

/** The panel's bodies without the subscriber: the hub sets it to the caller, and a body that names it is 422. */
export const assinaturaPropriaCriar = assinaturaCriar.omit({ aplicativo_assinante_id: true }).strict();

const refusals = {
  401: 'missing or invalid token, or a token that is not an application’s or a portal link’s (tipo_de_token_invalido: a panel user’s token)',
  403: 'the application of the token is not registered in the hub (aplicativo_nao_registrado) or is switched off (aplicativo_inativo)',
  404: 'no such subscription among the application’s own (another application’s is not found either)',
  409: 'assinatura_duplicada: the application already subscribes to this type and version at this URL',
  422: 'the body breaks a rule or names another field (aplicativo_assinante_id included: the subscriber is the caller), the filter is invalid (filtro_invalido), the type is switched off (tipo_de_evento_inativo) or missing, the version is missing, or the destination is refused (destino_proibido, destino_nao_resolvido, https_obrigatorio)',
  429: 'muitas_requisicoes: more than HUB_ALTERACOES_DE_ASSINATURAS_POR_MINUTO changes this minute from the application, in this instance (Retry-After); limite_de_assinaturas: it holds HUB_ASSINATURAS_POR_APLICATIVO subscriptions already',
  503: 'sobrecarregado: this instance has HUB_CONSULTAS_DE_APLICATIVOS_EM_ANDAMENTO requests of applications under way',
};

export interface AssinaturasPropriasDeps {
  service: AssinaturasPropriasService;
  aplicativo: Guarded;
  admission?: RequestHandler;
  /** The budget of changes per application and minute (`rateLimitPerApplication`). */
  alteracoes: RequestHandler;
}

const chamador = (req: Request, res: Response) => ({ id: aplicativoDaRequisicao(res), clientId: req.aplicativo!.sub });

/** A subscribing application's writes of its own subscriptions, every rule of the panel's applying. */
export function assinaturasPropriasRoutes({ service, aplicativo, admission, alteracoes }: AssinaturasPropriasDeps) {
  const tag = 'Assinaturas';
  const admitir = withRateLimit(alteracoes, admission);
  return new ApiRouter()
    .route(
      {
        method: 'post',
        path: '/assinaturas',
        operationId: 'criarAssinaturaDoAplicativo',
        summary:
          'Subscribe the application of the token to an active type and a schema version at a URL, as the panel’s POST /assinatura with the caller as subscriber',
        tag,
        ...aplicativo,
        admission: admitir,
        body: assinaturaPropriaCriar,
        response: assinaturaSchema,
        status: 201,
        refusals,
      },
      ({ req, res, body }) => service.criar(chamador(req, res), body),
    )
    .route(
      {
        method: 'patch',
        path: '/assinaturas/:id',
        operationId: 'atualizarAssinaturaDoAplicativo',
        summary:
          'Change one of the application’s subscriptions (URL, filter, active, ordered, formato, attempts), as the panel’s PATCH /assinatura/{id}',
        tag,
        ...aplicativo,
        admission: admitir,
        params: idParams,
        body: assinaturaAtualizar,
        response: assinaturaSchema,
        refusals,
      },
      ({ req, res, params, body }) => service.atualizar(chamador(req, res), params.id, body),
    )
    .route(
      {
        method: 'delete',
        path: '/assinaturas/:id',
        operationId: 'excluirAssinaturaDoAplicativo',
        summary:
          'Delete one of the application’s subscriptions: its deliveries waiting or in the error queue are cancelled, as the panel’s DELETE /assinatura/{id}',
        tag,
        ...aplicativo,
        admission: admitir,
        params: idParams,
        refusals: {
          401: refusals[401],
          403: refusals[403],
          404: refusals[404],
          429: refusals[429],
          503: refusals[503],
        },
      },
      ({ req, res, params }) => service.excluir(chamador(req, res), params.id),
    );
}
