import { pageQuery, queryBoolean, queryText } from '@hub/http';
import { z } from 'zod';
import { autocompletePage, descricao, INT4_MAX, LISTA_MAX, pagina, queryId } from '../../schemas';
import { compatibilidade } from '../tipos-de-evento/tipos-de-evento.schemas';
import {
  DADOS_PROFUNDIDADE_MAX,
  ESQUEMA_MAX_BYTES,
  ESQUEMA_PROFUNDIDADE_MAX,
  mensagemDeProfundidade,
  profundidade,
} from '../../validation/limites';

/** Refuses a value nested deeper than `max`; depth first, since only then is JSON.stringify safe. */
const limitarProfundidade = (max: number) => (valor: unknown, ctx: z.RefinementCtx) => {
  if (profundidade(valor, max) > max) ctx.addIssue({ code: 'custom', message: mensagemDeProfundidade(max) });
};

/**
 * A JSON Schema object, passed through untouched (its key order is kept and served back). Its
 * depth and size are bounded before ajv sees it: ajv recurses once per level.
 */
export const esquemaJson = z
  .custom<Record<string, unknown>>(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    'must be a JSON Schema object',
  )
  .superRefine((esquema, ctx) => {
    if (profundidade(esquema, ESQUEMA_PROFUNDIDADE_MAX) > ESQUEMA_PROFUNDIDADE_MAX) {
      ctx.addIssue({ code: 'custom', message: mensagemDeProfundidade(ESQUEMA_PROFUNDIDADE_MAX) });
    } else if (Buffer.byteLength(JSON.stringify(esquema)) > ESQUEMA_MAX_BYTES) {
      ctx.addIssue({ code: 'custom', message: `must take at most ${ESQUEMA_MAX_BYTES} bytes as JSON` });
    }
  })
  .meta({
    type: 'object',
    description: `A JSON Schema (2020-12 by default, or draft-07): at most ${ESQUEMA_PROFUNDIDADE_MAX} levels deep and ${ESQUEMA_MAX_BYTES} bytes as JSON`,
  });

export const versaoCriar = z
  .object({ tipo_de_evento_id: z.uuid(), esquema: esquemaJson, descricao: descricao.nullish() })
  .strict();

/** The schema itself is not here: it never changes after creation. */
export const versaoAtualizar = z
  .object({ ativa: z.boolean().nullish(), descricao: descricao.nullable().optional() })
  .strict();

export const validarCorpo = z
  .object({
    dados: z
      .unknown()
      .superRefine(limitarProfundidade(DADOS_PROFUNDIDADE_MAX))
      .meta({ description: `any JSON value, at most ${DADOS_PROFUNDIDADE_MAX} levels deep` }),
  })
  .strict();

const filtros = { tipo_de_evento_id: queryId, ativa: queryBoolean.optional() };
export const listaQuery = pageQuery({ maxTamanho: LISTA_MAX }).extend(filtros);
export const autocompleteQuery = z.object({ ...autocompletePage, busca: queryText(200), ...filtros });
export const filtroQuery = z.object({
  ...filtros,
  tipo_de_evento_nome: queryText(200),
  versao: z
    .string()
    .regex(/^\d{1,9}$/, 'must be a whole number')
    .transform(Number)
    .optional(),
});

/** Versions are numbered from 1 in an integer (int4) column. */
const numeroDeVersao = z.number().int().min(1).max(INT4_MAX);

export const versaoSchema = z.object({
  id: z.string(),
  tipo_de_evento_id: z.string(),
  tipo_de_evento_nome: z.string(),
  versao: numeroDeVersao,
  esquema: z.record(z.string(), z.unknown()),
  ativa: z.boolean(),
  descricao: z.string().nullable(),
  criado_em: z.string(),
  atualizado_em: z.string(),
});
export type VersaoDto = z.infer<typeof versaoSchema>;
export const versaoResumoSchema = z.object({
  id: z.string(),
  tipo_de_evento_id: z.string(),
  tipo_de_evento_nome: z.string(),
  versao: numeroDeVersao,
});
export const paginaVersao = pagina(versaoSchema);
export const paginaVersaoAutoComplete = pagina(versaoResumoSchema);

export const resultadoDaValidacao = z.object({
  valido: z.boolean(),
  erros: z.array(z.object({ caminho: z.string(), mensagem: z.string() })).max(50),
});

export const verificarCompatibilidadeCorpo = z
  .object({
    tipo_de_evento_id: z.uuid(),
    esquema: esquemaJson,
    compatibilidade: compatibilidade
      .optional()
      .meta({ description: "the rule to check by; the type's own when absent" }),
  })
  .strict();

export const resultadoDaCompatibilidade = z.object({
  compativel: z.boolean(),
  erros: z
    .array(z.object({ caminho: z.string(), mensagem: z.string() }))
    .max(50)
    .meta({
      description: 'caminho: a JSON Pointer into the new schema; mensagem: the change, or why it cannot be decided',
    }),
  compatibilidade: compatibilidade,
  versao_anterior: numeroDeVersao
    .nullable()
    .meta({ description: 'the version checked against; null when the type has none' }),
  motivo: z
    .string()
    .nullable()
    .meta({ description: 'why the schema is compatible without a comparison (no rule, or no version yet)' }),
});
