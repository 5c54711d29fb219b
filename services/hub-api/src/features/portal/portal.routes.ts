import type { Guards } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import type { PortalService } from './portal.service';
import { linkCriar, linkDoPortalSchema } from './portal.schemas';

const tag = 'Aplicativo';

/** The operator's side of the subscribers' portal: make a link for an application, revoke them all. */
export function portalRoutes({ service, guards }: { service: PortalService; guards: Guards }): ApiRouter {
  const editar = guards.permission('monitoramento', 'editar');
  return new ApiRouter()
    .route(
      {
        method: 'post',
        path: '/aplicativo/:id/portal',
        operationId: 'criarLinkDoPortal',
        summary:
          "A link to the subscribers' portal for the application: its token opens the application's subscriber routes (not POST /eventos, no panel route) until expira_em (at most 24 h, 1 h by default) or a revocation",
        tag,
        ...editar,
        params: idParams,
        body: linkCriar,
        response: linkDoPortalSchema,
        status: 201,
        refusals: {
          409: 'aplicativo_inativo: the application is switched off',
          422: 'expira_em_invalido: expira_em is not after now or is more than 24 hours ahead; or the body has another field',
        },
      },
      ({ params, body, req }) => service.emitir(params.id, body, req.usuario!.email),
    )
    .route(
      {
        method: 'delete',
        path: '/aplicativo/:id/portal',
        operationId: 'revogarLinksDoPortal',
        summary:
          "Revoke every link to the subscribers' portal made so far for the application: their tokens are refused (401) on every instance from the next request",
        tag,
        ...editar,
        params: idParams,
      },
      ({ params }) => service.revogar(params.id),
    );
}
