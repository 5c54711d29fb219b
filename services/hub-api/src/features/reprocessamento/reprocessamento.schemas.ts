import { pagina } from '../../schemas';
import { z } from 'zod';
import { rfc3339 } from '../eventos/eventos.schemas';

/** A request names at most this many deliveries; more are asked with a filter, or in several requests. */
export const ENTREGA_IDS_MAX = 1000;

export const SITUACOES_DO_REPROCESSAMENTO = ['pendente', 'em_andamento', 'concluida', 'cancelada'] as const;
export type SituacaoDoReprocessamento = (typeof SITUACOES_DO_REPROCESSAMENTO)[number];

/**
 * Body of POST /reprocessamento: delivery ids, or a filter over the deliveries in fila_de_erro
 * (desde and ate bound their criada_em, the event's receipt, inclusive); an empty body means all.
 */
export const solicitacaoCriar = z
  .object({
    entrega_ids: z
      .array(z.uuid().transform((id) => id.toLowerCase()))
      .min(1)
      .max(ENTREGA_IDS_MAX)
      .nullish()
      .describe(`at most ${ENTREGA_IDS_MAX}; repeated ids count once; not combined with a filter`),
    assinatura_id: z.uuid().nullish(),
    tipo_de_evento_id: z.uuid().nullish(),
    desde: rfc3339.nullish(),
    ate: rfc3339.nullish(),
  })
  .strict()
  .superRefine((corpo, ctx) => {
    const filtro = corpo.assinatura_id || corpo.tipo_de_evento_id || corpo.desde || corpo.ate;
    if (corpo.entrega_ids && filtro)
      ctx.addIssue({
        code: 'custom',
        path: ['entrega_ids'],
        message: 'either entrega_ids or a filter (assinatura_id, tipo_de_evento_id, desde, ate), not both',
      });
    if (corpo.desde && corpo.ate && new Date(corpo.desde) > new Date(corpo.ate))
      ctx.addIssue({ code: 'custom', path: ['ate'], message: 'must not be before desde' });
  });
export type SolicitacaoCriar = z.infer<typeof solicitacaoCriar>;

export const solicitacaoSchema = z.object({
  id: z.string(),
  situacao: z.enum(SITUACOES_DO_REPROCESSAMENTO),
  entrega_ids: z.array(z.string()).nullable(),
  assinatura_id: z.string().nullable(),
  tipo_de_evento_id: z.string().nullable(),
  desde: z.string().nullable(),
  ate: z.string().nullable(),
  quantidade_de_entregas: z.number().int().describe('deliveries in fila_de_erro that matched when it was asked'),
  reprocessadas: z.number().int().describe('moved to a new cycle so far'),
  ignoradas: z.number().int().describe('left in fila_de_erro: their subscription is switched off or deleted'),
  solicitada_pelo_email: z.string().nullable(),
  criada_em: z.string(),
  atualizada_em: z.string(),
  iniciada_em: z.string().nullable(),
  concluida_em: z.string().nullable(),
});
export type SolicitacaoDto = z.infer<typeof solicitacaoSchema>;
export const paginaSolicitacao = pagina(solicitacaoSchema);
