import { pageQuery } from '@hub/http';
import { z } from 'zod';
import { LISTA_MAX, pagina } from '../../schemas';

export const CONCORRENCIA_MAXIMA = 1000;
export const LIMITE_POR_SEGUNDO_MAXIMO = 100_000;

/** One destination origin and how delivering to it went in the last hour (architecture §4, Destino). */
export const destinoSchema = z.object({
  id: z.string(),
  origem: z.string().describe('scheme://host[:port] that subscriptions deliver to'),
  assinaturas: z.number().int().describe('subscriptions (not deleted) that deliver to this origin'),
  em_andamento: z
    .number()
    .int()
    .describe(
      'POSTs under way to it now, over every delivery worker, as each reported them at its last refresh of the destinations (DELIVERY_DESTINOS_REFRESH, 2 s)',
    ),
  concorrencia_maxima: z.number().int().describe('attempts in flight at once, over every worker'),
  limite_por_segundo: z
    .number()
    .int()
    .nullable()
    .describe('attempts started per second, over every worker; null: none'),
  pausado: z.boolean().describe('while paused, deliveries to it wait: no attempt is made or counted'),
  isolamento: z
    .object({
      situacao: z
        .enum(['isolada', 'saindo', 'removendo'])
        .describe(
          'isolada: its jobs wait in its own queue; saindo: going back to the shared work queue (nothing new goes to its queue); removendo: its queue is being emptied into the shared one and deleted',
        ),
      motivo: z
        .enum(['retida', 'acumulo'])
        .nullable()
        .describe(
          'retida: held back (paused, circuit open); acumulo: its jobs were piling up in the shared work queue',
        ),
      desde: z.string().describe('when it entered this situacao'),
      fila: z.string().describe('its queue, as GET /fila lists it'),
    })
    .nullable()
    .describe(
      'its queue of its own, while it has one (architecture §5, fair scheduling): held back or backlogged, its jobs wait there instead of in front of the other destinations; null: its jobs go through the shared work queue',
    ),
  tentativas_na_ultima_hora: z.number().int(),
  falhas_na_ultima_hora: z.number().int(),
  latencia_p50_ms: z
    .number()
    .int()
    .nullable()
    .describe('median attempt duration of the last hour, as the bound of its histogram bucket; null without attempts'),
  latencia_p99_ms: z
    .number()
    .int()
    .nullable()
    .describe('99th percentile, as latencia_p50_ms; 10000 means 10 s or more'),
  criado_em: z.string(),
  atualizado_em: z.string(),
});
export type DestinoDto = z.infer<typeof destinoSchema>;
export const paginaDestino = pagina(destinoSchema);
export const listaDeDestinosQuery = pageQuery({ maxTamanho: LISTA_MAX });

export const destinoAtualizar = z
  .object({
    concorrencia_maxima: z.number().int().min(1).max(CONCORRENCIA_MAXIMA).optional(),
    limite_por_segundo: z
      .number()
      .int()
      .min(1)
      .max(LIMITE_POR_SEGUNDO_MAXIMO)
      .nullable()
      .optional()
      .describe('null removes the limit'),
  })
  .strict();
