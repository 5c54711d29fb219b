import { pageQuery, queryBoolean, queryText } from '@hub/http';
import { z } from 'zod';
import { MAX_URL, parseDestinationUrl } from '@hub/destinations';
import { autocompletePage, INT4_MAX, LISTA_MAX, pagina, queryId } from '../../schemas';
import { filtroEntrada, filtroSaida } from './filtro.schemas';

export const TENTATIVAS_PADRAO = 8;

/**
 * http(s) with a host and a port 1–65535, no credentials, no control characters, at most 2048
 * characters; stored as the parser normalises it (href). Where it may point is checked by the service.
 */
export const urlDeDestino = z
  .string()
  .transform((text, ctx) => {
    const parsed = parseDestinationUrl(text);
    if ('problema' in parsed) {
      ctx.addIssue({ code: 'custom', message: parsed.problema });
      return z.NEVER;
    }
    return parsed.url.href;
  })
  .meta({ format: 'uri', maxLength: MAX_URL });
const tentativas = z.number().int().min(1).max(50);
/** Ordered delivery per entity (docs/decisions/ordered-delivery-per-entity.md). */
const entregaOrdenada = z
  .boolean()
  .describe(
    'deliveries of one entidade_id attempted one at a time, in the order their events were accepted; ' +
      'each delivery body carries sequencia (1, 2, 3… per entity)',
  );
/** The shape of the deliveries (docs/contract.md §11). */
export const FORMATOS = ['standard-webhooks', 'cloudevents'] as const;
export type Formato = (typeof FORMATOS)[number];
export const formato = z.enum(FORMATOS).meta({
  description:
    "standard-webhooks (the hub's delivery body, application/json) or cloudevents (the CloudEvents 1.0 structured-mode " +
    'body, application/cloudevents+json); both signed with the same Standard Webhooks headers',
});
/** A schema version number: the column is an integer (int4). */
const versaoDoEsquema = z.number().int().min(1).max(INT4_MAX);

export const assinaturaCriar = z
  .object({
    aplicativo_assinante_id: z.uuid(),
    tipo_de_evento_id: z.uuid(),
    versao_do_esquema: versaoDoEsquema,
    url_de_destino: urlDeDestino,
    maximo_de_tentativas: tentativas.optional().default(TENTATIVAS_PADRAO),
    // The content filter (filtro.ts): absent or null, every event.
    filtro: filtroEntrada.optional(),
    entrega_ordenada: entregaOrdenada.optional().default(false),
    formato: formato.optional().default('standard-webhooks'),
  })
  .strict();

export const assinaturaAtualizar = z
  .object({
    url_de_destino: urlDeDestino.nullish(),
    ativa: z.boolean().nullish(),
    maximo_de_tentativas: tentativas.nullish(),
    // The content filter (filtro.ts): absent, unchanged; null, removed (every event).
    filtro: filtroEntrada.optional(),
    entrega_ordenada: entregaOrdenada.nullish(),
    formato: formato.nullish(),
  })
  .strict();

const versaoQuery = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a whole number')
  .transform(Number)
  .optional();
const filtros = {
  aplicativo_assinante_id: queryId,
  tipo_de_evento_id: queryId,
  versao_do_esquema: versaoQuery,
  ativa: queryBoolean.optional(),
};
export const listaQuery = pageQuery({ maxTamanho: LISTA_MAX }).extend(filtros);
export const filtroQuery = z.object(filtros);
export const autocompleteQuery = z.object({ ...autocompletePage, busca: queryText(200), ...filtros });

export const assinaturaSchema = z.object({
  id: z.string(),
  aplicativo_assinante_id: z.string(),
  aplicativo_assinante_nome: z.string(),
  tipo_de_evento_id: z.string(),
  tipo_de_evento_nome: z.string(),
  versao_do_esquema: versaoDoEsquema,
  url_de_destino: z.string(),
  maximo_de_tentativas: tentativas,
  entrega_ordenada: entregaOrdenada,
  formato,
  ativa: z.boolean(),
  filtro: filtroSaida,
  criado_em: z.string(),
  atualizado_em: z.string(),
  alterada_por_tipo: z
    .enum(['aplicativo', 'operador'])
    .nullable()
    .describe(
      'who made the last change (its creation included): the subscribing application itself or an operator of the panel; null for a subscription last changed before this was recorded',
    ),
  alterada_por: z
    .string()
    .nullable()
    .describe("the application's client_id, or the operator's e-mail (not shown to applications: null there)"),
  alterada_em: z.string().nullable().describe('when the last change was made'),
});
export type AssinaturaDto = z.infer<typeof assinaturaSchema>;
export const assinaturaResumoSchema = assinaturaSchema.pick({
  id: true,
  aplicativo_assinante_nome: true,
  tipo_de_evento_nome: true,
  versao_do_esquema: true,
  url_de_destino: true,
});
export const paginaAssinatura = pagina(assinaturaSchema);
export const paginaAssinaturaAutoComplete = pagina(assinaturaResumoSchema);
