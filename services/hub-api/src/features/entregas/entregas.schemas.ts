import { pageQuery } from '@hub/http';
import { z } from 'zod';
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

/** One attempt of a delivery (DESIGN §4, Tentativa). */
export const tentativaSchema = z.object({
  id: z.string(),
  numero: z.number().int().describe('1, 2, 3… over the whole life of the delivery, every cycle'),
  iniciada_em: z.string(),
  duracao_ms: z.number().int(),
  status_http: z.number().int().nullable().describe('null when no answer came'),
  sucesso: z.boolean(),
  resposta: z.string().nullable().describe('the answer’s body, truncated to 64 KiB'),
  erro: z.string().nullable(),
  cabecalhos: z.record(z.string(), z.unknown()).describe('the headers sent (signatures shown, never a key)'),
});
export type TentativaDto = z.infer<typeof tentativaSchema>;

export const entregaDetalhadaSchema = entregaSchema.extend({
  tentativas: z.array(tentativaSchema).describe('every attempt, oldest first'),
});
export type EntregaDetalhadaDto = z.infer<typeof entregaDetalhadaSchema>;

export const paginaEntrega = pagina(entregaSchema);
