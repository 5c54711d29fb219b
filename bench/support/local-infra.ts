import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';

/** Local plumbing every benchmark script needs: a free port, a RabbitMQ virtual host of its own. */

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const rabbitmqctl = (...args: string[]) =>
  execFileSync('rabbitmqctl', ['-q', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * A virtual host made anew (no queue or message of an earlier run is left to consume), so a
 * benchmark's services never consume messages meant for a platform or tests running beside it.
 * False when rabbitmqctl is not there (a remote broker): the caller uses the default vhost.
 */
export function freshVhost(name: string): boolean {
  try {
    if (rabbitmqctl('list_vhosts').split('\n').includes(name)) rabbitmqctl('delete_vhost', name);
    rabbitmqctl('add_vhost', name);
    rabbitmqctl('set_permissions', '-p', name, 'guest', '.*', '.*', '.*');
    return true;
  } catch {
    return false;
  }
}

export function deleteVhost(name: string): void {
  rabbitmqctl('delete_vhost', name);
}

/**
 * Rolls the local RabbitMQ node's quorum-queue WAL over to a new file and waits until its segment
 * writer has moved what the old one held into the queues' segment files (RabbitMQ 3.10's ra): the
 * storage work owed to the messages written so far is done now, not at the next rollover (every
 * 512 MB of writes by default), which stalls every quorum queue of the node while it runs
 * (docs/decisions/isolation-benchmark.md). False when it cannot (a remote
 * broker, no rabbitmqctl).
 */
export function rolarWalDoRabbit(): boolean {
  // The rollover is asynchronous, and the segment writer deletes a WAL file once it has moved all of
  // it: done when the one file left is not the one written before (a minute at most).
  const erlang =
    'Dir = maps:get(wal_data_dir, ra_system:fetch(quorum_queues)), ' +
    'Antes = lists:max(filelib:wildcard("*.wal", Dir)), ' +
    'ok = ra_log_wal:force_roll_over(ra_log_wal), ' +
    'Esperar = fun E(0) -> timeout; E(N) -> case filelib:wildcard("*.wal", Dir) of ' +
    '[Um] when Um =/= Antes -> ok; _ -> timer:sleep(100), E(N - 1) end end, ' +
    'Esperar(600).';
  try {
    return rabbitmqctl('eval', erlang).trim() === 'ok';
  } catch {
    return false;
  }
}

/**
 * The destination rows of these URLs' origins with `concorrencia` POSTs at once for all workers
 * together (what an operator's PATCH /destino/{id} sets; the default is 10).
 */
export async function abrirDestinos(
  db: { $executeRaw(query: TemplateStringsArray, ...values: unknown[]): Promise<number> },
  urls: string[],
  concorrencia: number,
): Promise<void> {
  const agora = new Date();
  for (const origem of new Set(urls.map((url) => new URL(url).origin)))
    await db.$executeRaw`
      insert into destino (id, origem, concorrencia_maxima, criado_em, atualizado_em)
      values (${randomUUID()}::uuid, ${origem}, ${concorrencia}, ${agora}, ${agora})
      on conflict (origem) do update set concorrencia_maxima = excluded.concorrencia_maxima`;
}
