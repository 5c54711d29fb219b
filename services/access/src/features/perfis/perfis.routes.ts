import type { Guards } from '@hub/auth';
import { type ApiRouter, idParams, pageQuery, paginaSchema as pagina, queryText } from '@hub/http';
import { z } from 'zod';
import { perfilAtualizar, perfilCriar, perfilSchema } from './perfis.schemas';
import type { PerfisService } from './perfis.service';

const tag = 'Perfil de acesso';
const base = '/perfil-de-acesso';

export function perfisRoutes({
  router,
  guards,
  service,
}: {
  router: ApiRouter;
  guards: Guards;
  service: PerfisService;
}): ApiRouter {
  const busca = z.object({ busca: queryText() });
  return router
    .route(
      {
        method: 'get',
        path: base,
        summary: 'Page of access profiles',
        tag,
        ...guards.permission('configuracoes', 'ler'),
        query: pageQuery().extend(busca.shape),
        response: pagina(perfilSchema),
      },
      async ({ query }) => service.page(query),
    )
    .route(
      {
        method: 'post',
        path: base,
        summary: 'Create an access profile',
        tag,
        ...guards.permission('configuracoes', 'criar'),
        body: perfilCriar,
        response: perfilSchema,
        status: 201,
        refusals: {
          403: 'inactive access or missing permission; a non-master may create only a profile within their own permissions (permissoes_excedidas)',
          409: 'name taken',
        },
      },
      async ({ body, req }) => service.create(body, req.acesso!),
    )
    .route(
      {
        method: 'get',
        path: `${base}/autocomplete`,
        summary: 'Access profiles by name: id and nome',
        tag,
        ...guards.permission('configuracoes', 'ler'),
        query: pageQuery().extend(busca.shape),
        response: pagina(z.object({ id: z.string(), nome: z.string() })),
      },
      async ({ query }) => service.autocomplete(query),
    )
    .route(
      {
        method: 'get',
        path: `${base}/filtro`,
        summary: 'Every matching access profile',
        tag,
        ...guards.permission('configuracoes', 'ler'),
        query: busca,
        response: z.array(perfilSchema),
      },
      async ({ query }) => service.filtro(query.busca),
    )
    .route(
      {
        method: 'get',
        path: `${base}/:id`,
        summary: 'One access profile',
        tag,
        ...guards.permission('configuracoes', 'ler'),
        params: idParams,
        response: perfilSchema,
      },
      async ({ params }) => service.get(params.id),
    )
    .route(
      {
        method: 'patch',
        path: `${base}/:id`,
        summary: 'Rename or change permissions',
        tag,
        ...guards.permission('configuracoes', 'editar'),
        params: idParams,
        body: perfilAtualizar,
        response: perfilSchema,
        refusals: {
          403: 'inactive access or missing permission; a non-master may edit only a profile within their own permissions, and keep it within them (permissoes_excedidas)',
          409: 'name taken',
        },
      },
      async ({ params, body, req }) => service.update(params.id, body, req.acesso!),
    )
    .route(
      {
        method: 'delete',
        path: `${base}/:id`,
        summary: 'Delete an access profile no access uses',
        tag,
        ...guards.permission('configuracoes', 'deletar'),
        params: idParams,
        refusals: {
          403: 'inactive access or missing permission; a non-master may delete only a profile within their own permissions (permissoes_excedidas)',
          409: 'in use',
        },
      },
      async ({ params, req }) => {
        await service.delete(params.id, req.acesso!);
      },
    );
}
