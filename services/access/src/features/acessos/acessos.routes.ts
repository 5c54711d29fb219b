import type { Guards } from '@hub/auth';
import { type ApiRouter, idParams, pageQuery, paginaSchema as pagina, queryBoolean, queryText } from '@hub/http';
import { z } from 'zod';
import { authSchema } from './acessos.model';
import type { AcessosService } from './acessos.service';

const tag = 'Auth';
const REACH =
  "inactive access or missing permission; a master's access is never changed (acesso_master_protegido); a non-master never changes their own access (acesso_proprio) and changes only an access whose profile is within their own permissions (permissoes_excedidas)";
const autoCompleteItem = z.object({ id: z.string(), email: z.string(), perfil: z.string() });

/** The eight /auth routes except /auth/acesso (see acesso-atual). */
export function acessosRoutes({
  router,
  guards,
  service,
}: {
  router: ApiRouter;
  guards: Guards;
  service: AcessosService;
}): ApiRouter {
  const ler = guards.permission('colaboradores', 'qualquer');
  return router
    .route(
      {
        method: 'get',
        path: '/auth',
        operationId: 'listarAcessos',
        summary: 'Page of accesses, by perfil then e-mail',
        tag,
        ...ler,
        query: pageQuery(),
        response: pagina(authSchema),
      },
      async ({ query }) => service.page(query),
    )
    .route(
      {
        method: 'post',
        path: '/auth',
        operationId: 'criarAcesso',
        summary: 'Create an access (perfil colaborador, active, without access profile)',
        tag,
        ...guards.permission('colaboradores', 'criar'),
        body: z.object({ email: z.string(), perfil: z.string() }).strict(),
        response: authSchema,
        status: 201,
        refusals: { 409: 'the e-mail is taken' },
      },
      async ({ body }) => service.create(body),
    )
    .route(
      {
        method: 'get',
        path: '/auth/autocomplete',
        operationId: 'autocompletarAcessos',
        summary: 'Accesses by e-mail: id, email and perfil only',
        tag,
        ...ler,
        query: pageQuery().extend({ busca: queryText(), perfil: queryText() }),
        response: pagina(autoCompleteItem),
      },
      async ({ query }) => service.autocomplete({ email: query.busca, perfil: query.perfil }, query),
    )
    .route(
      {
        method: 'get',
        path: '/auth/filtro',
        operationId: 'filtrarAcessos',
        summary: 'Every matching access, by e-mail, without pagination',
        tag,
        ...ler,
        query: z.object({ email: queryText(), perfil: queryText(), ativo: queryBoolean.optional() }),
        response: z.array(authSchema),
      },
      async ({ query }) => service.filtro(query),
    )
    .route(
      {
        method: 'get',
        path: '/auth/:id',
        operationId: 'obterAcesso',
        summary: 'One access',
        tag,
        ...ler,
        params: idParams,
        response: authSchema,
      },
      async ({ params }) => service.get(params.id),
    )
    .route(
      {
        method: 'patch',
        path: '/auth/:id',
        operationId: 'alterarAcesso',
        summary: 'Change the e-mail or the active flag (never of a master); a new e-mail drops the access profile',
        tag,
        ...guards.permission('colaboradores', 'editar'),
        params: idParams,
        body: z.object({ email: z.string().nullable().optional(), ativo: z.boolean().nullable().optional() }).strict(),
        response: authSchema,
        refusals: { 403: REACH, 409: 'the e-mail is taken' },
      },
      async ({ params, body, req }) => service.update(params.id, body, req.acesso!),
    )
    .route(
      {
        method: 'delete',
        path: '/auth/:id',
        operationId: 'removerAcesso',
        summary: 'Delete an access (logical; never of a master or of a linked collaborator)',
        tag,
        ...guards.permission('colaboradores', 'deletar'),
        params: idParams,
        refusals: { 403: REACH, 409: 'a collaborator is linked to the access' },
      },
      async ({ params, req }) => {
        await service.delete(params.id, req.acesso!);
      },
    );
}
