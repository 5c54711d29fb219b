import type { Guards } from '@hub/auth';
import { ApiRouter, idParams, pageQuery } from '@hub/http';
import { LISTA_MAX } from '../../schemas';
import { paginaSolicitacao, solicitacaoCriar, solicitacaoSchema } from './reprocessamento.schemas';
import type { ReprocessamentoService } from './reprocessamento.service';

const tag = 'Solicitação de reprocessamento';

export function reprocessamentoRoutes({
  service,
  guards,
}: {
  service: ReprocessamentoService;
  guards: Guards;
}): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  const editar = guards.permission('monitoramento', 'editar');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/reprocessamento',
        summary: 'Reprocessing requests, newest first, a page at a time, with their progress',
        tag,
        ...ler,
        query: pageQuery({ maxTamanho: LISTA_MAX }),
        response: paginaSolicitacao,
      },
      ({ query }) => service.listar(query),
    )
    .route(
      {
        method: 'post',
        path: '/reprocessamento',
        summary:
          'Reprocess deliveries of the error queue, by ids or by a filter (an empty body means all): each gets a new cycle, in batches in the background',
        tag,
        ...editar,
        body: solicitacaoCriar,
        status: 202,
        response: solicitacaoSchema,
        refusals: { 422: 'ids and a filter together, desde after ate, or a subscription or type that does not exist' },
      },
      ({ body, req }) => service.solicitar(body, req.usuario?.email ?? null),
    )
    .route(
      {
        method: 'get',
        path: '/reprocessamento/:id',
        summary: 'One reprocessing request: situacao, quantidade_de_entregas, reprocessadas, ignoradas',
        tag,
        ...ler,
        params: idParams,
        response: solicitacaoSchema,
      },
      ({ params }) => service.buscar(params.id),
    )
    .route(
      {
        method: 'delete',
        path: '/reprocessamento/:id',
        operationId: 'cancelarReprocessamento',
        summary: 'Cancel a reprocessing request that has not started (pendente)',
        tag,
        ...editar,
        params: idParams,
        refusals: { 409: 'reprocessamento_nao_pendente: it started, ended or was cancelled already' },
      },
      ({ params }) => service.cancelar(params.id),
    );
}
