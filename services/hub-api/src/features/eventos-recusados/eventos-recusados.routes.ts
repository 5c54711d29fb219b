import type { Guards } from '@hub/auth';
import { ApiRouter, idParams, pageQuery } from '@hub/http';
import { z } from 'zod';
import { LISTA_MAX, queryId } from '../../schemas';
import { FILTRO_EVENTOS_MAX, limiteDeTempo } from '../eventos/eventos.consultas';
import { eventoRecusadoSchema, paginaEventoRecusado } from '../eventos/eventos.schemas';
import type { EventosRecusadosService } from './eventos-recusados.service';

const tag = 'Evento recusado';

/** codigo is a stable snake_case word; anything else names no refusal and is a 400. */
const codigo = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be a snake_case error code')
  .optional();

export const filtroDeRecusadosQuery = z.object({
  codigo,
  aplicativo_id: queryId,
  tipo_de_evento_id: queryId,
  desde: limiteDeTempo,
  ate: limiteDeTempo,
});

export function eventosRecusadosRoutes({
  service,
  guards,
}: {
  service: EventosRecusadosService;
  guards: Guards;
}): ApiRouter {
  const ler = guards.permission('monitoramento', 'ler');
  return new ApiRouter()
    .route(
      {
        method: 'get',
        path: '/evento-recusado',
        summary: 'Refused publications, newest first, a page at a time',
        tag,
        ...ler,
        query: pageQuery({ maxTamanho: LISTA_MAX }),
        response: paginaEventoRecusado,
      },
      ({ query }) => service.listar(query),
    )
    .route(
      {
        method: 'get',
        path: '/evento-recusado/filtro',
        summary: `Refused publications matching every filter given (desde and ate inclusive), newest first, at most ${FILTRO_EVENTOS_MAX}`,
        tag,
        ...ler,
        query: filtroDeRecusadosQuery,
        response: z.array(eventoRecusadoSchema),
      },
      ({ query }) => service.filtrar(query),
    )
    .route(
      {
        method: 'get',
        path: '/evento-recusado/:id',
        summary: 'One refused publication: why, the body received (truncated to 64 KiB), who sent it, when',
        tag,
        ...ler,
        params: idParams,
        response: eventoRecusadoSchema,
      },
      ({ params }) => service.buscar(params.id),
    );
}
