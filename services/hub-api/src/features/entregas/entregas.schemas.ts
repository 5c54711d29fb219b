import { pageQuery } from '@hub/http';
import { z } from 'zod';
import { tentativaSchema } from '../tentativas/tentativas.schemas';
import { LISTA_MAX, pagina, queryId } from '../../schemas';
import { limiteDeTempo } from '../eventos/eventos.consultas';
import { entregaSchema, SITUACOES } from '../eventos/eventos.schemas';

/** GET /entrega/filtro answers at most this many deliveries, as the other /filtro routes of events. */
export const FILTRO_ENTREGAS_MAX = 200;

/** The filters of GET /entrega and GET /entrega/filtro; all optional, all combine (exact matches). */
export const filtrosDeEntrega = {
  situacao: z.enum(SITUACOES).optional(),
  assinatura_id: queryId,
  evento_id: queryId,
  aplicativo_assinante_id: queryId,
  tipo_de_evento_id: queryId,
  desde: limiteDeTempo.describe('bounds criada_em (the event’s receipt), RFC 3339, inclusive'),
  ate: limiteDeTempo.describe('bounds criada_em (the event’s receipt), RFC 3339, inclusive'),
};
export const listaDeEntregasQuery = pageQuery({ maxTamanho: LISTA_MAX }).extend(filtrosDeEntrega);
export const filtroDeEntregasQuery = z.object(filtrosDeEntrega);
export type FiltroDeEntregas = z.infer<typeof filtroDeEntregasQuery>;

export const entregaDetalhadaSchema = entregaSchema.extend({
  tentativas: z.array(tentativaSchema).describe('every attempt, oldest first'),
});
export type EntregaDetalhadaDto = z.infer<typeof entregaDetalhadaSchema>;

export const paginaEntrega = pagina(entregaSchema);
