import type { Guards } from '@hub/auth';
import { ApiRouter, idParams } from '@hub/http';
import { z } from 'zod';
import { FILTRO_EVENTOS_MAX } from '../eventos/eventos.consultas';
import {
  filtroDeTentativasQuery,
  listaDeTentativasQuery,
  paginaTentativa,
  tentativaSchema,
} from './tentativas.schemas';
import type { TentativasService } from './tentativas.service';

const tag = 'Tentativa';

export function tentativasRoutes({ service, guards }: { service: TentativasService; guards: Guards }): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/tentativa',
        summary:
          'Attempts of deliveries, newest first, a page at a time (filters entrega_id, assinatura_id, sucesso, status_http, desde, ate)',
        tag,
        ...ler,
        query: listaDeTentativasQuery,
        response: paginaTentativa,
      },
      ({ query: { pagina, tamanho, ...filtro } }) => service.listar(filtro, { pagina, tamanho }),
    )
    .route(
      {
        method: 'get',
        path: '/tentativa/filtro',
        summary: `Attempts matching every filter given (desde and ate inclusive, on iniciada_em), newest first, at most ${FILTRO_EVENTOS_MAX}`,
        tag,
        ...ler,
        query: filtroDeTentativasQuery,
        response: z.array(tentativaSchema),
      },
      ({ query }) => service.filtrar(query),
    )
    .route(
      {
        method: 'get',
        path: '/tentativa/:id',
        summary: 'One attempt: when, how long, the status and the answer (truncated to 64 KiB), the headers sent',
        tag,
        ...ler,
        params: idParams,
        response: tentativaSchema,
      },
      ({ params }) => service.buscar(params.id),
    );
}
