import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { ERROR_QUEUE_HEADERS, EXCHANGES, QUEUES, trabalhoDeEntrega } from '@hub/contracts';
import { dropDatabase, waitFor } from '@hub/testing';
import type { Db } from '../../db';
import type { RunningHubApi } from '../../start';
import { type Contexto, iniciarContexto } from '../../contexto.test-support';
import { trabalhosDasEntregas } from '../entregas/trabalho';
import { entregaIdDe, lerMensagens } from './fila-de-erro';
import { TRAVAS } from './fila.repository';
import { travaDaFilaDeErro } from './trava';

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

/** A hub-api of the tests with the database it uses (the error queue's locks live there). */
export type HubDaFila = Pick<RunningHubApi, 'db' | 'broker'> & { databaseUrl: string };

/** The agreement at rest between the error queue and the deliveries in fila_de_erro (nothing changed by looking). */
export interface Concordancia {
  concordam: boolean;
  entregas_na_fila_de_erro: number;
  mensagens: number;
  /** deliveries in fila_de_erro with no message */
  faltando: string[];
  /** messages whose delivery is not in fila_de_erro (or does not exist) */
  sobrando: string[];
  /** deliveries with more than one message */
  duplicadas: string[];
  mensagens_ilegiveis: number;
  /** the delivery id of every message, sorted (one per message) */
  ids_das_mensagens: string[];
}

/**
 * The check of the one-to-one agreement, at rest: under the lock of a reconciliation pass (taken
 * once the passes under way are over), reads every message (unacked, then returned with a
 * requeue, which the error queue allows since it has no delivery limit) and every delivery in
 * fila_de_erro, and compares. The whole queue is held in memory: for tests only.
 */
export async function verificarConcordancia(hub: HubDaFila): Promise<Concordancia> {
  const trava = await waitFor(() => travaDaFilaDeErro(hub.databaseUrl).paraConciliar(), {
    what: 'the error queue between two reconciliation passes',
    timeoutMs: 30_000,
  });
  try {
    const porEntrega = new Map<string, number>();
    let ilegiveis = 0;
    const mensagens = await hub.broker.withChannel(async (canal) => {
      const lidas = await lerMensagens(
        canal,
        QUEUES.entregasErro,
        (await canal.checkQueue(QUEUES.entregasErro)).messageCount,
      );
      for (const mensagem of lidas) {
        const id = entregaIdDe(mensagem);
        if (id) porEntrega.set(id, (porEntrega.get(id) ?? 0) + 1);
        else ilegiveis += 1;
      }
      canal.nackAll(true);
      return lidas.length;
    });
    const linhas = await hub.db.entrega.findMany({ where: { situacao: 'fila_de_erro' }, select: { id: true } });
    const naFila = new Set(linhas.map((l) => l.id));
    const faltando = [...naFila].filter((id) => !porEntrega.has(id)).sort();
    const sobrando = [...porEntrega.keys()].filter((id) => !naFila.has(id)).sort();
    const duplicadas = [...porEntrega]
      .filter(([, n]) => n > 1)
      .map(([id]) => id)
      .sort();
    return {
      concordam: faltando.length + sobrando.length + duplicadas.length + ilegiveis === 0,
      entregas_na_fila_de_erro: naFila.size,
      mensagens,
      faltando,
      sobrando,
      duplicadas,
      mensagens_ilegiveis: ilegiveis,
      ids_das_mensagens: [...porEntrega].flatMap(([id, n]) => Array<string>(n).fill(id)).sort(),
    };
  } finally {
    await trava.soltar();
  }
}

/** The delivery ids of the messages in the error queue (looked at under a pass's lock, then returned). */
export const idsNaFila = async (hub: HubDaFila) => (await verificarConcordancia(hub)).ids_das_mensagens;

/** The error queue's messages with their headers (looked at, then returned; no lock: for a hub at rest). */
export const mensagensComCabecalhos = (hub: Pick<RunningHubApi, 'broker'>) =>
  hub.broker.withChannel(async (canal) => {
    const lidas = await lerMensagens(
      canal,
      QUEUES.entregasErro,
      (await canal.checkQueue(QUEUES.entregasErro)).messageCount,
    );
    canal.nackAll(true);
    return lidas.map((m) => ({ id: entregaIdDe(m), headers: m.properties.headers ?? {} }));
  });

/**
 * A poison job the real way: put on the work queue and returned more times than its delivery
 * limit, until RabbitMQ dead-letters it into the error queue (as when a job kills its worker again and again).
 */
export async function envenenar(hub: Pick<RunningHubApi, 'db' | 'broker'>, entregaId: string): Promise<void> {
  const [trabalho] = (await trabalhosDasEntregas(hub.db, [entregaId])).values();
  await hub.broker.publish(
    trabalhoDeEntrega.exchange,
    trabalhoDeEntrega.routingKey,
    Buffer.from(JSON.stringify(trabalho)),
    { messageId: entregaId },
  );
  await hub.broker.withChannel(async (canal) => {
    for (;;) {
      const m = await canal.get(QUEUES.entregas, { noAck: false });
      if (!m) {
        if ((await canal.checkQueue(QUEUES.entregas)).messageCount === 0) return;
        continue;
      }
      canal.nack(m, false, true);
    }
  });
  await waitFor(async () => (await mensagensComCabecalhos(hub)).some((m) => m.id === entregaId), {
    what: 'the poison job in the error queue',
  });
}

/** The error queue's locks held now, as "passe:ExclusiveLock" (pg_locks), by any session. */
export async function travasTomadas(db: Db): Promise<string[]> {
  const linhas = await db.$queryRaw<{ chave: number; modo: string }[]>`
    select objid::int as chave, mode as modo from pg_locks
     where locktype = 'advisory' and classid = ${TRAVAS.classe}::oid and objsubid = 2 and granted
       -- this database's: pg_locks is the whole cluster's, and other test files take the same keys in theirs
       and database = (select oid from pg_database where datname = current_database())
     order by objid, mode`;
  return linhas.map((l) => `${l.chave === TRAVAS.passe ? 'passe' : 'leitura'}:${l.modo}`);
}

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
