import type { Guards } from '@hub/auth';
import { ApiRouter } from '@hub/http';
import { z } from 'zod';
import { FILTRO_EVENTOS_MAX, filtroDeEventosQuery, listaDeEventosQuery } from './eventos.consultas';
import { eventoSchema, paginaEvento, resumoSchema } from './eventos.schemas';
import type { EventosService } from './eventos.service';

const tag = 'Evento';

/**
 * The panel's reads of events (contract §4.3). Registered before GET /evento/{id}, so that "filtro" and
 * "resumo" are never taken for an id.
 */
export function eventosRoutes({ service, guards }: { service: EventosService; guards: Guards }): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/evento',
        summary: 'Events, newest received first, with their delivery counters and without dados',
        tag,
        ...ler,
        query: listaDeEventosQuery,
        response: paginaEvento,
      },
      ({ query }) => service.listar(query),
    )
    .route(
      {
        method: 'get',
        path: '/evento/filtro',
        summary: `Events matching every filter given (exact; desde and ate inclusive), newest first, at most ${FILTRO_EVENTOS_MAX}, without dados`,
        tag,
        ...ler,
        query: filtroDeEventosQuery,
        response: z.array(eventoSchema),
      },
      ({ query }) => service.filtrar(query),
    )
    .route(
      {
        method: 'get',
        path: '/evento/resumo',
        summary: 'Totals of the last 24 hours in hourly bands, the current queue and the active registrations',
        tag,
        ...ler,
        response: resumoSchema,
      },
      () => service.resumo(),
    );
}
