import type { Broker } from '@hub/broker';
import { ERROR_QUEUE_HEADERS, QUEUES } from '@hub/contracts';
import { conflict } from '@hub/http';
import type { Db } from '../../db';
import type { Situacao } from '../eventos/eventos.schemas';
import { assentarAcks, copiarNaFilaDeErro, lerMensagens, trabalhoDe, travaDaFilaDeErro } from './fila-de-erro';

/** One message of the error queue as an operator sees it. */
export interface MensagemDaFila {
  /** false when the body is not a delivery job (the delivery fields are then null) */
  legivel: boolean;
  entrega_id: string | null;
  evento_id: string | null;
  assinatura_id: string | null;
  url_de_destino: string | null;
  /** attempts of the cycle that ended, as the worker wrote in the message */
  tentativas: number | null;
  ultimo_erro: string | null;
  /** why it is there: tentativas_esgotadas, assinatura_encerrada (410), limite_de_entregas (poison job), conciliacao */
  motivo: string | null;
  /** the delivery's situacao now (null when it no longer exists): anything but fila_de_erro is a disagreement */
  situacao_da_entrega: Situacao | null;
}

export interface OlharDaFila {
  fila: string;
  /** messages in the queue when the look began */
  mensagens_na_fila: number;
  itens: MensagemDaFila[];
}

const texto = (v: unknown): string | null => (v === undefined || v === null ? null : String(v));
const numero = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * A look at the error queue that takes nothing out of it (architecture §4, GET /fila/{nome}/mensagens).
 * The messages read are copied to the tail with a confirm and then acked, not requeued (see
 * copiarNaFilaDeErro; only the one message assentarAcks reads is given back), under the lock of
 * the reconciliation: so each look shows the next messages,
 * and after the whole queue the first ones again. The work and delay queues are not looked into:
 * their jobs are being consumed or timed, and taking them even for a moment would delay them and
 * count against their delivery limit; their deliveries are under GET /entrega.
 */
export function espiarFilaDeErro(db: Db, broker: Broker) {
  const comTrava = travaDaFilaDeErro(db);

  return (nome: string, limite: number): Promise<OlharDaFila> => {
    if (nome !== QUEUES.entregasErro)
      throw conflict(
        'fila_sem_inspecao',
        `only the error queue (${QUEUES.entregasErro}) can be looked into; the jobs of ${nome} are in flight: see GET /entrega`,
      );
    return comTrava(() =>
      broker.withChannel(async (canal) => {
        const total = (await canal.checkQueue(nome)).messageCount;
        const lidas = await lerMensagens(canal, nome, Math.min(limite, total));
        const trabalhos = lidas.map(trabalhoDe);
        const ids = [...new Set(trabalhos.flatMap((t) => (t ? [t.entrega_id] : [])))];
        const linhas = ids.length
          ? await db.$queryRaw<{ id: string; situacao: Situacao }[]>`
              select id::text, situacao from entrega where id = any(${ids}::uuid[])`
          : [];
        const situacoes = new Map(linhas.map((l) => [l.id, l.situacao]));
        await Promise.all(lidas.map((m) => copiarNaFilaDeErro(broker, m)));
        const ultima = lidas[lidas.length - 1];
        if (ultima) {
          canal.ack(ultima, true);
          await assentarAcks(canal, nome);
        }
        const itens = lidas.map((mensagem, i): MensagemDaFila => {
          const trabalho = trabalhos[i];
          const headers = mensagem.properties.headers ?? {};
          return {
            legivel: trabalho !== undefined,
            entrega_id: trabalho?.entrega_id ?? null,
            evento_id: trabalho?.evento_id ?? null,
            assinatura_id: trabalho?.assinatura_id ?? null,
            url_de_destino: trabalho?.url_de_destino ?? null,
            tentativas: numero(headers[ERROR_QUEUE_HEADERS.tentativas]),
            ultimo_erro: texto(headers[ERROR_QUEUE_HEADERS.ultimoErro]),
            motivo: texto(headers[ERROR_QUEUE_HEADERS.motivo]),
            situacao_da_entrega: (trabalho && situacoes.get(trabalho.entrega_id)) ?? null,
          };
        });
        return { fila: nome, mensagens_na_fila: total, itens };
      }),
    );
  };
}
export type EspiarFilaDeErro = ReturnType<typeof espiarFilaDeErro>;
