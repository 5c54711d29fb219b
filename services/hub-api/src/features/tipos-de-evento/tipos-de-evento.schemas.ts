import { pageQuery, queryBoolean, queryText } from '@hub/http';
import { z } from 'zod';
import { autocompletePage, descricao, LISTA_MAX, pagina, queryId } from '../../schemas';
import { COMPATIBILIDADES } from '../compatibilidade/compatibilidade';

export const NOME_DE_TIPO = /^[a-z0-9_]+(\.[a-z0-9_]+)*$/;
export const nomeDeTipo = z
  .string()
  .max(200)
  .regex(NOME_DE_TIPO, 'must be dot-separated segments of a-z, 0-9 and _, like pedido.criado');

export const RETENCAO_PADRAO = 30;
const retencao = z.number().int().min(1).max(3650);

/** The rule the type's next schema version is checked by against its latest (none: no check). */
export const compatibilidade = z.enum(COMPATIBILIDADES).meta({
  description:
    'none (no check), backward (every document valid under the latest version stays valid under the next), ' +
    'forward (every document valid under the next is valid under the latest) or full (both). A change applies to ' +
    'the next version created: versions already stored are not checked again',
});

export const tipoCriar = z
  .object({
    nome: nomeDeTipo,
    descricao: descricao.nullish(),
    aplicativo_id: z.uuid(),
    retencao_em_dias: retencao.optional().default(RETENCAO_PADRAO),
    compatibilidade: compatibilidade.optional().default('none'),
  })
  .strict();

export const tipoAtualizar = z
  .object({
    descricao: descricao.nullable().optional(),
    ativo: z.boolean().nullish(),
    retencao_em_dias: retencao.nullish(),
    compatibilidade: compatibilidade.nullish(),
  })
  .strict();

const filtros = { aplicativo_id: queryId, ativo: queryBoolean.optional() };
export const listaQuery = pageQuery({ maxTamanho: LISTA_MAX }).extend({ busca: queryText(200), ...filtros });
export const autocompleteQuery = z.object({ ...autocompletePage, busca: queryText(200), ...filtros });
export const filtroQuery = z.object({ nome: queryText(200), ...filtros });

export const tipoSchema = z.object({
  id: z.string(),
  nome: z.string(),
  descricao: z.string().nullable(),
  aplicativo_id: z.string(),
  aplicativo_nome: z.string(),
  ativo: z.boolean(),
  retencao_em_dias: retencao,
  compatibilidade,
  criado_em: z.string(),
  atualizado_em: z.string(),
});
export type TipoDto = z.infer<typeof tipoSchema>;
export const tipoResumoSchema = z.object({ id: z.string(), nome: z.string() });
export const paginaTipo = pagina(tipoSchema);
export const paginaTipoAutoComplete = pagina(tipoResumoSchema);
