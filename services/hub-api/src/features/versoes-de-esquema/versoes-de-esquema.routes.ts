import type { Guards } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import { z } from 'zod';
import type { VersoesService } from './versoes-de-esquema.service';
import {
  autocompleteQuery,
  filtroQuery,
  listaQuery,
  paginaVersao,
  paginaVersaoAutoComplete,
  resultadoDaCompatibilidade,
  resultadoDaValidacao,
  validarCorpo,
  verificarCompatibilidadeCorpo,
  versaoAtualizar,
  versaoCriar,
  versaoSchema,
} from './versoes-de-esquema.schemas';

const tag = 'Versão de esquema';

export function versoesRoutes({ service, guards }: { service: VersoesService; guards: Guards }): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/versao-de-esquema',
        summary: 'Schema versions by type name and number, a page at a time',
        tag,
        ...ler,
        query: listaQuery,
        response: paginaVersao,
      },
      ({ query: { pagina, tamanho, ...filtro } }) => service.listar(filtro, { pagina, tamanho }),
    )
    .route(
      {
        method: 'post',
        path: '/versao-de-esquema',
        summary: 'Create the next schema version of an event type (JSON Schema 2020-12 by default, or draft-07)',
        tag,
        ...guards.permission('monitoramento', 'criar'),
        body: versaoCriar,
        response: versaoSchema,
        status: 201,
        refusals: {
          409: "esquema_incompativel: the schema breaks the type's compatibility rule against its latest version (erros: caminho into the new schema, mensagem)",
          422: 'the body breaks a rule, the type does not exist, or the JSON Schema is invalid (erros from ajv)',
        },
      },
      ({ body }) => service.criar(body),
    )
    .route(
      {
        method: 'post',
        path: '/versao-de-esquema/verificar-compatibilidade',
        summary:
          "Check a schema against the type's latest version under its compatibility rule (or the one given); stores nothing",
        tag,
        ...guards.permission('monitoramento', 'criar'),
        body: verificarCompatibilidadeCorpo,
        response: resultadoDaCompatibilidade,
        refusals: {
          404: 'no event type has this id',
          422: 'the body breaks a rule, or the JSON Schema is invalid (erros from ajv)',
        },
      },
      ({ body }) => service.verificarCompatibilidade(body),
    )
    .route(
      {
        method: 'get',
        path: '/versao-de-esquema/autocomplete',
        summary: 'Ids, type names and numbers of schema versions (busca: type name)',
        tag,
        ...ler,
        query: autocompleteQuery,
        response: paginaVersaoAutoComplete,
      },
      ({ query: { pagina, tamanho, ...filtro } }) => service.autocomplete(filtro, { pagina, tamanho }),
    )
    .route(
      {
        method: 'get',
        path: '/versao-de-esquema/filtro',
        summary: 'Every matching schema version (at most 1000), without pages',
        tag,
        ...ler,
        query: filtroQuery,
        response: z.array(versaoSchema),
      },
      ({ query }) => service.filtrar(query),
    )
    .route(
      {
        method: 'get',
        path: '/versao-de-esquema/:id',
        summary: 'One schema version',
        tag,
        ...ler,
        params: idParams,
        response: versaoSchema,
      },
      ({ params }) => service.buscar(params.id),
    )
    .route(
      {
        method: 'patch',
        path: '/versao-de-esquema/:id',
        summary: 'Switch a schema version off or on, or describe it (its schema never changes)',
        tag,
        ...guards.permission('monitoramento', 'editar'),
        params: idParams,
        body: versaoAtualizar,
        response: versaoSchema,
      },
      ({ params, body }) => service.atualizar(params.id, body),
    )
    .route(
      {
        method: 'post',
        path: '/versao-de-esquema/:id/validar',
        summary: 'Check sample dados against the version, exactly as publication will (at most 50 erros)',
        tag,
        ...guards.permission('monitoramento', 'criar'),
        params: idParams,
        body: validarCorpo,
        response: resultadoDaValidacao,
      },
      ({ params, body }) => service.validar(params.id, body.dados),
    );
}
