import { pageQuery } from '@hub/http';
import { z } from 'zod';
import { LISTA_MAX, queryId } from '../../schemas';
import { entidadeId, rfc3339 } from './eventos.schemas';

/** GET /evento/filtro and GET /evento-recusado/filtro answer at most this many items (contract §8). */
export const FILTRO_EVENTOS_MAX = 200;

/** An RFC 3339 bound of a query (desde, ate): inclusive; anything else is a 400. */
export const limiteDeTempo = rfc3339
  .transform((texto) => new Date(texto))
  .optional()
  .meta({ format: 'date-time', description: 'RFC 3339 with a time zone, inclusive' });

/** GET /evento: pagina and tamanho default 1 and 10, below 1 taken as 1, tamanho at most 500. */
export const listaDeEventosQuery = pageQuery({ maxTamanho: LISTA_MAX });

/** GET /evento/filtro: every filter optional, all combine (contract §4.3 r3). */
export const filtroDeEventosQuery = z.object({
  id: queryId,
  tipo_de_evento_id: queryId,
  aplicativo_publicador_id: queryId,
  entidade_id: entidadeId.optional(),
  desde: limiteDeTempo,
  ate: limiteDeTempo,
});
