import type { Guards } from '@hub/auth';
import { acessoAtualSchema } from '@hub/contracts';
import type { ApiRouter } from '@hub/http';

export function acessoAtualRoutes({ router, guards }: { router: ApiRouter; guards: Guards }): ApiRouter {
  return router.route(
    {
      method: 'get',
      path: '/auth/acesso',
      operationId: 'obterMeuAcesso',
      summary: "The caller's own access, access profile and permissions per area",
      tag: 'Auth',
      ...guards.user(),
      response: acessoAtualSchema,
    },
    ({ req }) => req.acesso,
  );
}
