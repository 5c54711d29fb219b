import type { Guards } from '@hub/auth';
import { type ApiRouter, idParams, page, pageQuery, paginaSchema as pagina, queryText } from '@hub/http';
import { z } from 'zod';
import { type PerfisService, perfilAtualizar, perfilCriar, perfilSchema, toPerfil } from './perfis.service';

const tag = 'Perfil de acesso';
const base = '/perfil-de-acesso';

export function perfisRoutes(router: ApiRouter, guards: Guards, service: PerfisService): ApiRouter {
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
      async ({ query }) => {
        const { itens, total } = await service.page(query);
        return page(itens.map(toPerfil), query, total);
      },
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
        refusals: { 409: 'name taken' },
      },
      async ({ body }) => toPerfil(await service.create(body)),
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
      async ({ query }) => {
        const { itens, total } = await service.autocomplete(query);
        return page(itens, query, total);
      },
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
      async ({ query }) => (await service.filtro(query.busca)).map(toPerfil),
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
      async ({ params }) => toPerfil(await service.get(params.id)),
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
        refusals: { 409: 'name taken' },
      },
      async ({ params, body }) => toPerfil(await service.update(params.id, body)),
    )
    .route(
      {
        method: 'delete',
        path: `${base}/:id`,
        summary: 'Delete an access profile no access uses',
        tag,
        ...guards.permission('configuracoes', 'deletar'),
        params: idParams,
        refusals: { 409: 'in use' },
      },
      async ({ params }) => {
        await service.delete(params.id);
      },
    );
}
