import { pageQuery } from '@hub/http';
import { z } from 'zod';
import { LISTA_MAX, pagina } from '../../schemas';

export const CONCORRENCIA_MAXIMA = 1000;
export const LIMITE_POR_SEGUNDO_MAXIMO = 100_000;

export const CIRCUITOS = ['fechado', 'aberto', 'meio_aberto'] as const;
/** How many transitions of a circuit a destination shows (the table keeps 50). */
export const HISTORICO_MOSTRADO = 10;

const situacaoDoCircuito = z.enum(CIRCUITOS);

/** One transition of a destination's circuit breaker. */
export const transicaoDoCircuitoSchema = z.object({
  em: z.string(),
  de: situacaoDoCircuito,
  para: situacaoDoCircuito,
  motivo: z
    .string()
    .describe(
      'falhas (the failures counted opened it), periodo_encerrado (the open period is over: one probe), sonda_expirada (the probe under way lost its lease: another probe), sonda_bem_sucedida, sonda_falhou (opened again, for longer), manual (closed by an operator)',
    ),
  detalhe: z.string().describe("the reason in a sentence (the failures and attempts counted, the probe's answer)"),
  falhas: z.number().int().nullable().describe('an opening for failures: the failed attempts counted'),
  tentativas: z.number().int().nullable().describe('an opening for failures: the attempts counted'),
  aberto_ate: z.string().nullable().describe('an opening: the earliest moment of the next probe'),
  por: z.string().nullable().describe("a close by hand: the operator's e-mail"),
});

/** The circuit breaker of a destination origin (architecture §5, Destinations). */
export const circuitoSchema = z.object({
  situacao: situacaoDoCircuito.describe(
    "fechado: deliveries are attempted; aberto: after a run of failures, its deliveries wait like a paused destination's (no attempt made or counted); meio_aberto: one delivery is being attempted as the probe, a success closes it",
  ),
  desde: z.string().nullable().describe('when it entered this state; null: it never opened'),
  aberto_ate: z.string().nullable().describe('aberto: the earliest moment of the probe'),
  aberturas_seguidas: z
    .number()
    .int()
    .describe("openings since it was last closed; each lasts twice the one before, up to the workers' cap"),
  historico: z
    .array(transicaoDoCircuitoSchema)
    .describe(`the latest transitions, newest first (at most ${HISTORICO_MOSTRADO})`),
});

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
  circuito: circuitoSchema,
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
