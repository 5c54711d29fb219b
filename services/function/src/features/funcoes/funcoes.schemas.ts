import { clampedInt, nomeTexto, pageQuery, paginaSchema, queryText } from '@hub/http';
import { z } from 'zod';

export const NOME_MAX = 120;

/**
 * A function name: trimmed, NFC, a visible character, 1 to 120 characters (code points, as
 * PostgreSQL counts them). Unique as nomeChave compares (the database's funcao_nome_unico).
 */
export const nomeDeFuncao = nomeTexto(NOME_MAX);

export const funcaoCriar = z.object({ nome: nomeDeFuncao }).strict();
export const funcaoAtualizar = z.object({ nome: nomeDeFuncao.nullable().optional() }).strict();

const busca = { busca: queryText(200) };
export const listaQuery = pageQuery({ maxTamanho: 500 }).extend(busca);
export const autocompleteQuery = z.object({ pagina: clampedInt(1), tamanho: clampedInt(10, 100), ...busca });
export const filtroQuery = z.object(busca);

export const funcaoSchema = z.object({
  id: z.string(),
  nome: z.string(),
  quantidade_de_colaboradores: z.number().int(),
  criado_em: z.string(),
  atualizado_em: z.string(),
});
export type FuncaoDto = z.infer<typeof funcaoSchema>;

export const funcaoResumoSchema = z.object({ id: z.string(), nome: z.string() });

export const paginaFuncao = paginaSchema(funcaoSchema);
export const paginaFuncaoAutoComplete = paginaSchema(funcaoResumoSchema);
