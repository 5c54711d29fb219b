import { pageQuery, queryBoolean, queryText } from '@hub/http';
import { z } from 'zod';
import { parseDestinationUrl } from '../../destinations/url';
import { autocompletePage, LISTA_MAX, pagina, queryId } from '../../schemas';

export const TENTATIVAS_PADRAO = 8;

/** http(s), at most 2048 characters, no credentials; where it may point is checked by the service. */
export const urlDeDestino = z
  .string()
  .trim()
  .superRefine((text, ctx) => {
    const parsed = parseDestinationUrl(text);
    if ('problema' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problema });
  });
const tentativas = z.number().int().min(1).max(50);

export const assinaturaCriar = z
  .object({
    aplicativo_assinante_id: z.uuid(),
    tipo_de_evento_id: z.uuid(),
    versao_do_esquema: z.number().int().min(1),
    url_de_destino: urlDeDestino,
    maximo_de_tentativas: tentativas.optional().default(TENTATIVAS_PADRAO),
  })
  .strict();

export const assinaturaAtualizar = z
  .object({
    url_de_destino: urlDeDestino.nullish(),
    ativa: z.boolean().nullish(),
    maximo_de_tentativas: tentativas.nullish(),
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
  versao_do_esquema: z.number().int(),
  url_de_destino: z.string(),
  maximo_de_tentativas: z.number().int(),
  ativa: z.boolean(),
  criado_em: z.string(),
  atualizado_em: z.string(),
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
