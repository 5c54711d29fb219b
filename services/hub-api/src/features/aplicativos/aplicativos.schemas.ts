import { nomeTexto, pageQuery, queryBoolean, queryText } from '@hub/http';
import { z } from 'zod';
import { LISTA_MAX, pagina } from '../../schemas';

/** Trimmed, NFC, a visible character, at most 120 characters; not unique (client_id is). */
export const nomeDeAplicativo = nomeTexto(120);
/** The `sub` of the application's tokens: visible ASCII, no spaces. */
export const clientId = z
  .string()
  .regex(/^[\x21-\x7e]{1,200}$/, 'must be 1 to 200 visible ASCII characters without spaces');

export const aplicativoCriar = z.object({ nome: nomeDeAplicativo, client_id: clientId }).strict();
export const aplicativoAtualizar = z
  .object({ nome: nomeDeAplicativo.nullish(), ativo: z.boolean().nullish() })
  .strict();

export const listaQuery = pageQuery({ maxTamanho: LISTA_MAX }).extend({
  busca: queryText(200),
  ativo: queryBoolean.optional(),
});

export const aplicativoSchema = z.object({
  id: z.string(),
  nome: z.string(),
  client_id: z.string(),
  ativo: z.boolean(),
  criado_em: z.string(),
  atualizado_em: z.string(),
});
export type AplicativoDto = z.infer<typeof aplicativoSchema>;
export const paginaAplicativo = pagina(aplicativoSchema);
