import { pageQuery } from '@hub/http';
import { z } from 'zod';
import { LISTA_MAX, pagina, queryId } from '../../schemas';
import { rfc3339 } from '../eventos/eventos.schemas';

export const SITUACOES_DA_REPRODUCAO = ['pendente', 'em_andamento', 'concluida', 'cancelada'] as const;
export type SituacaoDaReproducao = (typeof SITUACOES_DA_REPRODUCAO)[number];

/**
 * Body of POST /assinatura/{id}/reproduzir and POST /assinaturas/{id}/reproduzir: the range of
 * recebido_em, both ends inclusive (RFC 3339); desde after ate is 422 at /ate.
 */
export const reproducaoCriar = z
  .object({
    desde: rfc3339.describe('first instant of receipt (recebido_em) replayed, inclusive'),
    ate: rfc3339.describe('last instant of receipt replayed, inclusive; not before desde'),
    incluir_entregues: z
      .boolean()
      .optional()
      .describe(
        'true: an event that already has a delivery to the subscription gets a new cycle of it (same webhook-id); false (default): it is left alone',
      ),
  })
  .strict()
  .superRefine((corpo, ctx) => {
    if (new Date(corpo.desde) > new Date(corpo.ate))
      ctx.addIssue({ code: 'custom', path: ['ate'], message: 'must not be before desde' });
  });
export type ReproducaoCriar = z.infer<typeof reproducaoCriar>;

export const reproducaoSchema = z.object({
  id: z.string(),
  assinatura_id: z.string(),
  desde: z.string(),
  ate: z.string(),
  incluir_entregues: z.boolean(),
  situacao: z.enum(SITUACOES_DA_REPRODUCAO),
  quantidade_de_eventos: z
    .number()
    .int()
    .describe(
      'stored events of the subscription’s type and version received in [desde, ate] when it was asked, before its filter',
    ),
  criadas: z.number().int().describe('events that had no delivery to the subscription and got one'),
  reenviadas: z.number().int().describe('events whose delivery started a new cycle (incluir_entregues)'),
  ignoradas: z
    .number()
    .int()
    .describe(
      'events left alone: a delivery already there (or still in the queue), or the subscription’s filter does not take them',
    ),
  solicitada_por: z.string().describe('the panel user’s e-mail, or the client_id of the application that asked'),
  criada_em: z.string(),
  concluida_em: z.string().nullable().describe('when it ended, concluded or cancelled'),
});
export type ReproducaoDto = z.infer<typeof reproducaoSchema>;
export const paginaReproducao = pagina(reproducaoSchema);

export const reproducoesQuery = pageQuery({ maxTamanho: LISTA_MAX }).extend({ assinatura_id: queryId });
export type ReproducoesQuery = z.infer<typeof reproducoesQuery>;
