import { z } from 'zod';
import { INT4_MAX, pagina } from '../../schemas';

/**
 * The shapes of contract §2 (Evento, EventoDetalhado, Entrega, EventoCriar, ResumoDosEventos) and of the
 * refused events (architecture §4), shared by publication and the panel's reads.
 */

/** architecture §5: the states of a delivery. In the queue = pendente + em_andamento + aguardando_nova_tentativa. */
export const SITUACOES = [
  'pendente',
  'em_andamento',
  'aguardando_nova_tentativa',
  'concluida',
  'fila_de_erro',
  'cancelada',
] as const;
export type Situacao = (typeof SITUACOES)[number];
export const SITUACOES_NA_FILA: readonly Situacao[] = ['pendente', 'em_andamento', 'aguardando_nova_tentativa'];

/** entidade_id: trimmed, 1 to 200 characters (code points) after trimming (contract §4.3 r2, §8). */
export const ENTIDADE_ID_MAX = 200;
export const entidadeId = z
  .string()
  .transform((v) => v.trim())
  .refine((v) => v.length > 0, 'must have at least 1 character after trimming')
  .refine((v) => [...v].length <= ENTIDADE_ID_MAX, `must have at most ${ENTIDADE_ID_MAX} characters after trimming`)
  .meta({ maxLength: ENTIDADE_ID_MAX });

/**
 * The instants an RFC 3339 text may name: those PostgreSQL's timestamptz takes from Prisma and Prisma
 * reads back. Year 0000 (or an offset that moves 0001-01-01 before it) is refused by PostgreSQL;
 * 9999-12-31T23:59:59-23:59 is year 10000 in UTC, which PostgreSQL stores and Prisma reads back as an
 * Invalid Date (a stored replay of it broke GET /reproducao and held up every replay behind it).
 */
const INSTANTE_MIN = Date.parse('0001-01-01T00:00:00.000Z');
const INSTANTE_MAX = Date.parse('9999-12-31T23:59:59.999Z');

/** RFC 3339 with a time zone (Z or ±hh:mm), e.g. 2026-11-21T21:00:00.000Z, from 0001 to 9999 in UTC. */
export const rfc3339 = z.iso.datetime({ offset: true }).refine((texto) => {
  const instante = Date.parse(texto);
  return instante >= INSTANTE_MIN && instante <= INSTANTE_MAX;
}, 'must be an instant from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z');

/** Body of POST /evento and POST /eventos. dados is any JSON value, and must be present. */
export const eventoCriar = z
  .object({
    tipo_de_evento_id: z.uuid(),
    versao_do_esquema: z.number().int().min(1).max(INT4_MAX),
    entidade_id: entidadeId,
    dados: z.json().refine((v) => v !== undefined, 'is required'),
    ocorrido_em: rfc3339.nullish(),
  })
  .strict();
export type EventoCriar = z.infer<typeof eventoCriar>;

/**
 * eventoCriar as POST /eventos and POST /evento parse their body (eventoCriar describes it, and
 * parses the platform's events). A request's dados was made by JSON.parse and passed bodyGuard
 * (@hub/http), which refuses the one thing JSON.parse makes that is not a JSON value (a non-finite
 * number): present, it is a JSON value, and z.json()'s walk of it (a recursive union, about 14 µs of
 * a 1 KiB dados, and a copy of it) finds nothing more. Absent, the same refusal ('Invalid input' at
 * /dados).
 */
export const eventoCriarDoCorpo = eventoCriar.extend({
  dados: z.custom<EventoCriar['dados']>((valor) => valor !== undefined, { message: 'Invalid input' }),
});

export const contadoresSchema = z.object({
  quantidade_de_entregas: z.number().int(),
  entregas_concluidas: z.number().int(),
  entregas_na_fila: z.number().int(),
  entregas_na_fila_de_erro: z.number().int(),
});
export type Contadores = z.infer<typeof contadoresSchema>;

export const eventoSchema = z
  .object({
    id: z.string(),
    tipo_de_evento_id: z.string(),
    tipo_de_evento_nome: z.string(),
    versao_do_esquema: z.number().int(),
    aplicativo_publicador_id: z.string(),
    aplicativo_publicador_nome: z.string(),
    entidade_id: z.string(),
    ocorrido_em: z.string(),
    recebido_em: z.string(),
    publicado_pelo_email: z.string().nullable().optional(),
  })
  .extend(contadoresSchema.shape);
export type EventoDto = z.infer<typeof eventoSchema>;

export const entregaSchema = z.object({
  id: z.string(),
  evento_id: z.string(),
  evento_recebido_em: z.string(),
  entidade_id: z.string(),
  assinatura_id: z.string(),
  aplicativo_assinante_id: z.string(),
  aplicativo_assinante_nome: z.string(),
  tipo_de_evento_nome: z.string(),
  versao_do_esquema: z.number().int(),
  url_de_destino: z.string(),
  situacao: z.enum(SITUACOES),
  quantidade_de_tentativas: z.number().int(),
  tentativas_no_ciclo_atual: z.number().int(),
  maximo_de_tentativas: z.number().int(),
  proxima_tentativa_em: z.string(),
  entregue_em: z.string().nullable().optional(),
  ultimo_erro: z.string().nullable().optional(),
  criada_em: z.string(),
  atualizada_em: z.string(),
  sequencia: z
    .number()
    .int()
    .nullable()
    .describe(
      'its place among the deliveries of its entidade_id to an ordered subscription (entrega_ordenada): 1, 2, 3…, ' +
        'as the body it delivers says; null for an unordered subscription',
    ),
});
export type EntregaDto = z.infer<typeof entregaSchema>;

export const eventoDetalhadoSchema = eventoSchema.extend({
  dados: z.json().describe('the published data, exactly as the publisher sent it'),
  entregas: z.array(entregaSchema),
});

/**
 * A delivery as the publishing application reads it (POST /eventos, GET /eventos/{id}): its own
 * progress, not who the subscriber is, where it receives (URLs often carry secrets) or what it answered.
 */
export const entregaDoPublicadorSchema = entregaSchema
  .pick({
    id: true,
    evento_id: true,
    evento_recebido_em: true,
    entidade_id: true,
    assinatura_id: true,
    tipo_de_evento_nome: true,
    versao_do_esquema: true,
    situacao: true,
    quantidade_de_tentativas: true,
    tentativas_no_ciclo_atual: true,
    maximo_de_tentativas: true,
    proxima_tentativa_em: true,
    entregue_em: true,
    criada_em: true,
    atualizada_em: true,
  })
  .strict()
  .describe(
    'Entrega without aplicativo_assinante_id, aplicativo_assinante_nome, url_de_destino and ultimo_erro: ' +
      'an application reads how the deliveries of its event progress, never where or to whom they go',
  );
export type EntregaDoPublicadorDto = z.infer<typeof entregaDoPublicadorSchema>;

export const eventoDoPublicadorSchema = eventoDetalhadoSchema.extend({
  entregas: z.array(entregaDoPublicadorSchema),
});

/** Only the fields an application may read of a delivery (an allowlist: a new field stays hidden). */
const camposDoPublicador = Object.keys(entregaDoPublicadorSchema.shape) as (keyof EntregaDoPublicadorDto)[];
export function entregaDoPublicador(entrega: EntregaDto): EntregaDoPublicadorDto {
  const permitida: Record<string, unknown> = {};
  for (const campo of camposDoPublicador) permitida[campo] = entrega[campo];
  return permitida as EntregaDoPublicadorDto;
}

export const paginaEvento = pagina(eventoSchema);

export const resumoPorHoraSchema = z.object({
  hora: z.string(),
  eventos: z.number().int(),
  recusados: z.number().int(),
  entregas_com_falha: z.number().int(),
  latencia_p50_ms: z
    .number()
    .nullable()
    .describe(
      "median latency (ms) of the deliveries concluded in the hour, from the event's acceptance (recebido_em) " +
        'to the delivery; read from a histogram, within 4.5 % of the exact value; null when none concluded',
    ),
  latencia_p99_ms: z
    .number()
    .nullable()
    .describe('99th percentile of the same latencies (ms), within 4.5 %; null when none concluded'),
});

export const resumoSchema = z.object({
  eventos_nas_ultimas_24_horas: z.number().int(),
  recusados_nas_ultimas_24_horas: z.number().int(),
  entregues_nas_ultimas_24_horas: z.number().int(),
  tentativas_com_falha_nas_ultimas_24_horas: z.number().int(),
  entregas_pendentes: z.number().int(),
  entregas_aguardando_nova_tentativa: z.number().int(),
  entregas_na_fila_de_erro: z.number().int(),
  aplicativos_ativos: z.number().int(),
  tipos_de_evento_ativos: z.number().int(),
  assinaturas_ativas: z.number().int(),
  por_hora: z.array(resumoPorHoraSchema),
});

export const eventoRecusadoSchema = z.object({
  id: z.string(),
  codigo: z.string(),
  status_http: z.number().int(),
  detalhe: z.string(),
  erros: z.array(z.object({ caminho: z.string(), mensagem: z.string() })),
  corpo: z.string().nullable().describe('the body received, as text, truncated to 64 KiB'),
  corpo_truncado: z.boolean(),
  tipo_de_evento_id: z.string().nullable(),
  versao_do_esquema: z.number().int().nullable(),
  aplicativo_id: z.string().nullable(),
  client_id: z.string().nullable(),
  publicado_pelo_email: z.string().nullable(),
  recebido_em: z.string(),
});
export type EventoRecusadoDto = z.infer<typeof eventoRecusadoSchema>;
export const paginaEventoRecusado = pagina(eventoRecusadoSchema);
