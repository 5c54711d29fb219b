import type { Broker } from '@hub/broker';
import { ERROR_QUEUE_HEADERS, QUEUES } from '@hub/contracts';
import { conflict } from '@hub/http';
import type { Db } from '../../db';
import { assentarAcks, copiarNaFilaDeErro, lerMensagens, type Mensagem, trabalhoDe } from './fila-de-erro';
import { type EstadoDaEntrega, filaRepository } from './fila.repository';
import type { MensagemDaFila, OlharDaFila } from './fila.schemas';
import { brokerIndisponivel } from './fila.service';
import type { TravaDaFilaDeErro } from './trava';

const texto = (v: unknown): string | null => (v === undefined || v === null ? null : String(v));
const numero = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** One message as an operator sees it (its job, when its body is one), with its delivery's situacao now. */
function item(
  mensagem: Mensagem,
  trabalho: ReturnType<typeof trabalhoDe>,
  situacoes: ReadonlyMap<string, EstadoDaEntrega>,
): MensagemDaFila {
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
    situacao_da_entrega: (trabalho && situacoes.get(trabalho.entrega_id)?.situacao) ?? null,
  };
}

export interface EspiarDeps {
  db: Db;
  broker: Broker;
  trava: TravaDaFilaDeErro;
}

/**
 * A look at the error queue that takes nothing out of it (architecture §4, GET /fila/{nome}/mensagens).
 * The messages read are copied to the tail with a confirm and then acked, not requeued (see
 * copiarNaFilaDeErro; only the one message assentarAcks reads is given back): so each look shows
 * the next messages, and after the whole queue the first ones again. It holds the readers' lock
 * shared: looks go together, but never beside a reconciliation pass, and one under way (or about
 * to start) refuses the look with 409 conciliacao_em_andamento instead of making it wait. The work
 * and delay queues are not looked into: their jobs are being consumed or timed, and taking them
 * even for a moment would delay them and count against their delivery limit; their deliveries are
 * under GET /entrega.
 */
export function espiarFilaDeErro({ db, broker, trava }: EspiarDeps) {
  const repo = filaRepository(db);

  return async (nome: string, limite: number): Promise<OlharDaFila> => {
    if (nome !== QUEUES.entregasErro)
      throw conflict(
        'fila_sem_inspecao',
        `only the error queue (${QUEUES.entregasErro}) can be looked into; the jobs of ${nome} are in flight: see GET /entrega`,
      );
    // Checked before the lock: a look must not hold it while the broker reconnects.
    if (!broker.connected) throw brokerIndisponivel();
    const travada = await trava.paraOlhar();
    try {
      return await broker.withChannel(async (canal) => {
        const total = (await canal.checkQueue(nome)).messageCount;
        const lidas = await lerMensagens(canal, nome, Math.min(limite, total));
        const trabalhos = lidas.map(trabalhoDe);
        const situacoes = await repo.estados([...new Set(trabalhos.flatMap((t) => (t ? [t.entrega_id] : [])))]);
        // Its lock lost, a pass may be reading now: the messages return unacked with the channel.
        await travada.confirmar();
        await Promise.all(lidas.map((m) => copiarNaFilaDeErro(broker, m)));
        const ultima = lidas[lidas.length - 1];
        if (ultima) {
          canal.ack(ultima, true);
          await assentarAcks(canal, nome);
        }
        return { fila: nome, mensagens_na_fila: total, itens: lidas.map((m, i) => item(m, trabalhos[i], situacoes)) };
      });
    } finally {
      await travada.soltar();
    }
  };
}
export type EspiarFilaDeErro = ReturnType<typeof espiarFilaDeErro>;
