import { pageQuery, queryBoolean } from '@hub/http';
import { z } from 'zod';
import { LISTA_MAX, pagina, queryId } from '../../schemas';
import { limiteDeTempo } from '../eventos/eventos.consultas';

/** One attempt of a delivery (architecture §4, Tentativa): what was sent and what came back. */
export const tentativaSchema = z.object({
  id: z.string(),
  entrega_id: z.string(),
  numero: z.number().int().describe('1, 2, 3… over the whole life of the delivery, every cycle'),
  iniciada_em: z.string(),
  duracao_ms: z.number().int(),
  status_http: z
    .number()
    .int()
    .nullable()
    .describe('null when no answer came (timeout, refused connection, unsafe destination)'),
  sucesso: z.boolean(),
  resposta: z.string().nullable().describe("the receiver's answer, truncated to 64 KiB"),
  erro: z.string().nullable(),
  cabecalhos: z.record(z.string(), z.string()).describe('the headers sent, signatures included (never a key)'),
});
export type TentativaDto = z.infer<typeof tentativaSchema>;
export const paginaTentativa = pagina(tentativaSchema);

/** An HTTP status of a query: 100–999, anything else is a 400. */
const statusHttp = z
  .string()
  .regex(/^[1-9][0-9]{2}$/, 'must be an HTTP status, 100 to 999')
  .transform(Number)
  .optional()
  .meta({ type: 'integer', minimum: 100, maximum: 999 });

const filtros = {
  entrega_id: queryId,
  assinatura_id: queryId,
  sucesso: queryBoolean.optional(),
  status_http: statusHttp,
  desde: limiteDeTempo,
  ate: limiteDeTempo,
};
export const filtroDeTentativasQuery = z.object(filtros);
export const listaDeTentativasQuery = pageQuery({ maxTamanho: LISTA_MAX }).extend(filtros);
export type FiltroDeTentativas = Omit<z.output<typeof filtroDeTentativasQuery>, never>;
