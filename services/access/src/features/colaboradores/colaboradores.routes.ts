import type { Guards } from '@hub/auth';
import { type ApiRouter, idParams, pageQuery, paginaSchema as pagina, queryText } from '@hub/http';
import { z } from 'zod';
import { type ColaboradoresService, colaboradorSchema } from './colaboradores.service';

const tag = 'Colaborador';
const base = '/colaborador';

export function colaboradoresRoutes(router: ApiRouter, guards: Guards, service: ColaboradoresService): ApiRouter {
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
        ...guards.permission('colaboradores', 'editar'),
        params: idParams,
        body: z.object({ perfil_de_acesso_id: z.uuid().nullable() }).strict(),
        response: colaboradorSchema,
      },
      async ({ params, body }) => service.assignProfile(params.id, body.perfil_de_acesso_id),
    );
}
