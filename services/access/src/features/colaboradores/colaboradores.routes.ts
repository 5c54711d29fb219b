import { type Guarded, type Guards, hasPermission } from '@hub/auth';
import { type ApiRouter, forbidden, idParams, pageQuery, paginaSchema as pagina, queryText } from '@hub/http';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { type ColaboradoresService, colaboradorSchema } from './colaboradores.service';

const tag = 'Colaborador';

/** Assigning a profile hands out permissions, so it needs configuracoes.editar as well. */
function editarColaboradoresEConfiguracoes(guards: Guards): Guarded {
  const colaboradores = guards.permission('colaboradores', 'editar');
  const configuracoes: RequestHandler = (req, _res, next) => {
    if (!req.acesso || !hasPermission(req.acesso, 'configuracoes', 'editar')) {
      throw forbidden('this route needs the permission configuracoes.editar as well');
    }
    next();
  };
  return {
    guards: [...colaboradores.guards, configuracoes],
    permission: 'colaboradores.editar and configuracoes.editar',
  };
}
const base = '/colaborador';

export function colaboradoresRoutes({
  router,
  guards,
  service,
}: {
  router: ApiRouter;
  guards: Guards;
  service: ColaboradoresService;
}): ApiRouter {
  const ler = guards.permission('colaboradores', 'ler');
  const busca = z.object({ busca: queryText() });
  return router
    .route(
      {
        method: 'get',
        path: base,
        summary: 'Page of collaborators, by e-mail',
        tag,
        ...ler,
        query: pageQuery().extend(busca.shape),
        response: pagina(colaboradorSchema),
      },
      async ({ query }) => service.page(query),
    )
    .route(
      {
        method: 'get',
        path: `${base}/autocomplete`,
        summary: 'Collaborators by e-mail or name: id, email, nome',
        tag,
        ...ler,
        query: pageQuery().extend(busca.shape),
        response: pagina(z.object({ id: z.string(), email: z.string(), nome: z.string() })),
      },
      async ({ query }) => service.autocomplete(query),
    )
    .route(
      {
        method: 'get',
        path: `${base}/filtro`,
        summary: 'Every matching collaborator',
        tag,
        ...ler,
        query: busca,
        response: z.array(colaboradorSchema),
      },
      async ({ query }) => service.filtro(query.busca),
    )
    .route(
      {
        method: 'get',
        path: `${base}/:id`,
        summary: 'One collaborator',
        tag,
        ...ler,
        params: idParams,
        response: colaboradorSchema,
      },
      async ({ params }) => service.get(params.id),
    )
    .route(
      {
        method: 'patch',
        path: `${base}/:id`,
        summary: "Set the collaborator's access profile (null removes it)",
        tag,
        ...editarColaboradoresEConfiguracoes(guards),
        params: idParams,
        body: z.object({ perfil_de_acesso_id: z.uuid().nullable() }).strict(),
        response: colaboradorSchema,
        refusals: {
          403: "inactive access or missing permission; only a master may change their own profile (perfil_proprio); a non-master may give or replace only a profile within their own permissions (permissoes_excedidas); a master's access is never changed (acesso_master_protegido)",
          422: 'no access profile has this id (perfil_inexistente)',
        },
      },
      async ({ params, body, req }) => service.assignProfile(params.id, body.perfil_de_acesso_id, req.acesso!),
    );
}
