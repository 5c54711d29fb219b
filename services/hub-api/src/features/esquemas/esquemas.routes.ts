import type { Guarded } from '@hub/auth';
import { ApiRouter, notFound } from '@hub/http';
import { z } from 'zod';
import { NOME_DE_TIPO } from '../tipos-de-evento/tipos-de-evento.schemas';
import type { VersoesRepository } from '../versoes-de-esquema/versoes-de-esquema.repository';

const params = z.object({
  tipo_de_evento_nome: z.string().max(200).regex(NOME_DE_TIPO),
  versao: z
    .string()
    .regex(/^[1-9]\d{0,8}$/)
    .transform(Number),
});

/**
 * GET /esquema/{tipo_de_evento_nome}/{versao}: the raw JSON Schema of a version, exactly as it was
 * registered, as application/schema+json. A version never changes, so clients may cache it.
 */
export function esquemasRoutes({ versoes, leitor }: { versoes: VersoesRepository; leitor: Guarded }): ApiRouter {
  return new ApiRouter().route(
    {
      method: 'get',
      path: '/esquema/:tipo_de_evento_nome/:versao',
      summary: 'The raw JSON Schema of an event type version (application/schema+json)',
      tag: 'Esquema',
      ...leitor,
      params,
      response: z.record(z.string(), z.unknown()),
    },
    async ({ params: { tipo_de_evento_nome, versao }, res }) => {
      const encontrada = await versoes.buscarPorNomeDoTipo(tipo_de_evento_nome, versao);
      if (!encontrada) throw notFound('schema');
      res
        .status(200)
        .set('cache-control', 'private, max-age=86400, immutable')
        .type('application/schema+json')
        .send(JSON.stringify(encontrada.esquema));
    },
  );
}
