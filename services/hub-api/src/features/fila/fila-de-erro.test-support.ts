import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { ERROR_QUEUE_HEADERS, EXCHANGES, QUEUES } from '@hub/contracts';
import type { Db } from '../../db';
import type { RunningHubApi } from '../../start';
import { type Contexto, iniciarContexto } from '../../test-support';
import { trabalhosDasEntregas } from '../entregas/trabalho';
import { lerMensagens } from './fila-de-erro';
import { dropDatabase } from '@hub/testing';

const ctl = (...args: string[]) => promisify(execFile)('rabbitmqctl', ['-q', ...args], { timeout: 30_000 });

/**
 * A virtual host of this test file's own. The error queue has one fixed name, and the
 * reconciliation removes every message whose delivery its database does not hold: in a shared
 * virtual host it would remove the messages of the other test files (and they ours).
 */
async function vhostProprio(): Promise<{ url: string; remover(): Promise<void> }> {
  const base = new URL(process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672/hub-test');
  const nome = `${decodeURIComponent(base.pathname.slice(1)) || 'root'}.fila.${randomBytes(4).toString('hex')}`;
  await ctl('add_vhost', nome);
  await ctl('set_permissions', '-p', nome, decodeURIComponent(base.username) || 'guest', '.*', '.*', '.*');
  base.pathname = `/${encodeURIComponent(nome)}`;
  return { url: base.toString(), remover: async () => void (await ctl('delete_vhost', nome)) };
}

export interface ContextoComFila extends Contexto {
  rabbitmqUrl: string;
  encerrar(): Promise<void>;
}

/** The route tests' context, its hub-api on a virtual host of its own. */
export async function iniciarContextoComFila(env: Record<string, string> = {}): Promise<ContextoComFila> {
  const vhost = await vhostProprio();
  const ctx = await iniciarContexto({ env: { RABBITMQ_URL: vhost.url, ...env } });
  return {
    ...ctx,
    rabbitmqUrl: vhost.url,
    encerrar: async () => {
      // A test that stopped the hub itself (a restart) leaves only its database to drop.
      await ctx.hub
        .close()
        .catch(() => dropDatabase(decodeURIComponent(new URL(ctx.hub.databaseUrl).pathname.slice(1))));
      await ctx.access.close();
      await ctx.identity.close();
      await vhost.remover();
    },
  };
}

/**
 * Puts deliveries into the error queue as the delivery worker does when a cycle runs out of
 * attempts: the row becomes fila_de_erro (with the cycle's attempts counted) and the job goes to
 * the error exchange with the headers of ERROR_QUEUE_HEADERS.
 */
export async function porNaFilaDeErro(
  hub: Pick<RunningHubApi, 'db' | 'broker'>,
  ids: string[],
  tentativas = 3,
): Promise<void> {
  await hub.db.$executeRaw`
    update entrega set situacao = 'fila_de_erro', tentativas_no_ciclo_atual = ${tentativas},
           quantidade_de_tentativas = quantidade_de_tentativas + ${tentativas}, ultimo_erro = 'HTTP 500',
           atualizada_em = now() - interval '1 second'
     where id = any(${ids}::uuid[])`;
  const trabalhos = await trabalhosDasEntregas(hub.db, ids);
  for (const trabalho of trabalhos.values())
    await hub.broker.publish(EXCHANGES.entregasErro, '', Buffer.from(JSON.stringify(trabalho)), {
      messageId: trabalho.entrega_id,
      headers: {
        [ERROR_QUEUE_HEADERS.tentativas]: tentativas,
        [ERROR_QUEUE_HEADERS.ultimoErro]: 'HTTP 500',
        [ERROR_QUEUE_HEADERS.motivo]: 'tentativas_esgotadas',
      },
    });
}

/** The delivery ids of the messages in the error queue (looked at under the reconciliation's lock, then returned). */
export const idsNaFila = async (hub: Pick<RunningHubApi, 'conciliacao'>) =>
  (await hub.conciliacao.verificar()).ids_das_mensagens;

/** The delivery ids of the messages in a queue nobody consumes, each as many times as it has messages. */
export async function idsNaFilaDeTrabalho(hub: Pick<RunningHubApi, 'broker'>, fila: string = QUEUES.entregas) {
  return hub.broker.withChannel(async (canal) => {
    const lidas = await lerMensagens(canal, fila, (await canal.checkQueue(fila)).messageCount);
    canal.nackAll(true);
    return lidas.map((m) => (JSON.parse(m.content.toString()) as { entrega_id: string }).entrega_id).sort();
  });
}

/** Outbox rows (delivery jobs) written for each delivery. */
export async function jobsNaOutbox(db: Db, ids: string[]): Promise<Map<string, number>> {
  const linhas = await db.$queryRaw<{ message_id: string; n: number }[]>`
    select message_id, count(*)::int as n from outbox where message_id = any(${ids}) group by message_id`;
  return new Map(linhas.map((l) => [l.message_id, l.n]));
}
