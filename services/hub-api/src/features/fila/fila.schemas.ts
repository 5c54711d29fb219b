import { clampedInt } from '@hub/http';
import { z } from 'zod';
import { SITUACOES } from '../eventos/eventos.schemas';

const n = (description: string) => z.number().int().describe(description);
const texto = (description: string) => z.string().nullable().describe(description);

/** What a pass found and fixed (POST /fila/erro/conciliar). */
export const resultadoDaConciliacaoSchema = z.object({
  mensagens_examinadas: n('messages read from the error queue (those present when the pass began)'),
  mensagens_mantidas: n('messages of deliveries in fila_de_erro, kept'),
  removidas_sem_entrega: n('removed: their delivery no longer exists (retention)'),
  removidas_fora_da_fila_de_erro: n('removed: their delivery left fila_de_erro (reprocessed, resent, concluded)'),
  removidas_duplicadas: n('removed: a second message of one delivery'),
  entregas_marcadas_fila_de_erro: n(
    'deliveries stuck in the queue whose job the work queue dead-lettered as poison: now fila_de_erro',
  ),
  mensagens_em_espera: n('poison jobs whose delivery moved recently: kept, decided on a later pass'),
  mensagens_ilegiveis: n('messages that are not a delivery job: kept for an operator'),
  entregas_republicadas: n('deliveries in fila_de_erro without a message: their job rebuilt and published'),
  iniciada_em: z.string(),
  concluida_em: z.string(),
});
export type ResultadoDaConciliacao = z.infer<typeof resultadoDaConciliacaoSchema>;

/** A queue of the delivery topology as RabbitMQ counts it now. */
export const filaSchema = z.object({
  nome: z.string(),
  papel: z
    .enum(['trabalho', 'atraso', 'erro', 'destino'])
    .describe(
      'the shared work queue, a retry delay step, the error queue, or the queue of one destination held back or backlogged (its jobs wait there instead of in the work queue)',
    ),
  origem: z
    .string()
    .nullable()
    .describe('the destination origin whose jobs wait in the queue (papel destino; null for the others)'),
  mensagens: n('messages in the queue now (ready, not yet taken)'),
  consumidores: n('consumers attached now'),
  declarada: z.boolean().describe('false while nobody declared it yet (a delay queue before the first worker started)'),
});
export type Fila = z.infer<typeof filaSchema>;
export type Papel = Fila['papel'];

export const nomeParams = z.object({ nome: z.string().min(1).max(255) });

export const olharQuery = z.object({ limite: clampedInt(20, 100) });

/** One message of the error queue as an operator sees it. */
export const mensagemDaFilaSchema = z.object({
  legivel: z.boolean().describe('false when the body is not a delivery job (its delivery fields are then null)'),
  entrega_id: texto("the delivery (the job's message id)"),
  evento_id: texto('its event'),
  assinatura_id: texto('its subscription'),
  url_de_destino: texto('where its last cycle POSTed'),
  tentativas: z.number().int().nullable().describe('attempts of the cycle that ended'),
  ultimo_erro: texto("the last attempt's error or HTTP status"),
  motivo: texto('tentativas_esgotadas, assinatura_encerrada (410), limite_de_entregas (poison job) or conciliacao'),
  situacao_da_entrega: z
    .enum(SITUACOES)
    .nullable()
    .describe(
      'the delivery now; anything but fila_de_erro (or null: erased) is a difference the reconciliation removes',
    ),
});
export type MensagemDaFila = z.infer<typeof mensagemDaFilaSchema>;

/** A look into the error queue (GET /fila/{nome}/mensagens). */
export const olharDaFilaSchema = z.object({
  fila: z.string(),
  mensagens_na_fila: n('messages in the queue when the look began'),
  itens: z.array(mensagemDaFilaSchema),
});
export type OlharDaFila = z.infer<typeof olharDaFilaSchema>;
