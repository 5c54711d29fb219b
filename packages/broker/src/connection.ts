import { hostname } from 'node:os';
import type { Logger } from '@hub/log';
import { type AmqpConnectionManager, AmqpConnectionManagerClass } from 'amqp-connection-manager';

/**
 * The AMQP URLs of a broker setting: one URL, or the nodes of a cluster separated by commas
 * (`amqp://u:p@mq-1:5672/hub,amqp://u:p@mq-2:5672/hub`; a comma inside credentials is written %2C).
 */
export function brokerUrls(setting: string | readonly string[]): string[] {
  const urls = (typeof setting === 'string' ? setting.split(',') : [...setting]).map((u) => u.trim()).filter(Boolean);
  if (urls.length === 0) throw new Error('no RabbitMQ URL given');
  return urls;
}

/** host:port of an AMQP URL, for logs (never its credentials). */
export const where = (url: unknown) => {
  if (typeof url !== 'string') return 'unknown';
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'amqps:' ? 5671 : 5672)}`;
};

/** How long one node may take to open an AMQP connection before the next is tried. */
const CONNECT_TIMEOUT_MS = 5_000;
/** The library's pause after a loss, and between two nodes of a round, before the next node is tried. */
const NEXT_NODE_SECONDS = 0.1;

export interface ConnectionSettings {
  /** Appears in the connection name in RabbitMQ's management UI, followed by the host and the pid. */
  name: string;
  /** The longest wait between two rounds of the URL list in which no node answered. */
  maxBackoffMs?: number;
}

/**
 * The connection of a process, kept by amqp-connection-manager: it goes round the URL list, one
 * node at a time, and after a loss starts with the node after the one just lost, so a node that
 * stops costs one reconnection to another. Its own pause between two tries is fixed; the list is
 * given through `findServers`, which waits an exponential backoff with jitter before each new
 * round once a whole round failed, so an outage is not hammered and the processes of a cluster
 * do not all come back at once. The returned `interrupt` ends that wait for good (the broker closing).
 */
export function connectionManager(
  urls: readonly string[],
  logger: Logger,
  settings: ConnectionSettings,
): { manager: AmqpConnectionManager; interrupt: () => void; lastError: () => Error | undefined } {
  let rounds = 0;
  let lastError: Error | undefined;
  let wake: (() => void) | undefined;
  let stopped = false;
  const manager = new AmqpConnectionManagerClass(null, {
    reconnectTimeInSeconds: NEXT_NODE_SECONDS,
    findServers: async () => {
      // The first round of an outage goes at once; each later one waits longer.
      if (rounds > 0) {
        const delay = Math.min(settings.maxBackoffMs ?? 10_000, 100 * 2 ** rounds) * (0.5 + Math.random() / 2);
        logger.warn(
          { err: lastError, attempt: rounds, retry_in_ms: Math.round(delay) },
          'RabbitMQ unreachable; retrying',
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      // Closing: no further connection is opened.
      if (stopped) throw new Error('broker closing');
      rounds += 1;
      return [...urls];
    },
    connectionOptions: {
      // Host and pid in the name: the management UI (and a fault test) can tell one process's connection from another's.
      clientProperties: { connection_name: `${settings.name} ${hostname()}:${process.pid}` },
      // A node that takes the TCP connection and then says nothing must not hold the failover.
      timeout: CONNECT_TIMEOUT_MS,
    },
  });
  manager.on('connect', () => {
    rounds = 0;
  });
  manager.on('connectFailed', ({ err, url }) => {
    if (!stopped) lastError = err;
    if (urls.length > 1) logger.warn({ err, node: where(url) }, 'RabbitMQ node unreachable; trying the next');
  });
  const interrupt = () => {
    stopped = true;
    wake?.();
  };
  return { manager, interrupt, lastError: () => lastError };
}
