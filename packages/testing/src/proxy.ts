import { createServer, type Server, type Socket, connect } from 'node:net';

export interface TcpProxy {
  /** 127.0.0.1:<port> of the proxy: give it to the service instead of the real address. */
  readonly host: string;
  readonly port: number;
  /** The dependency goes away: open connections are cut and new ones refused until `resume()`. */
  cut(): Promise<void>;
  /** Connections are accepted and forwarded again, on the same port. */
  resume(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A TCP proxy to `target` that a test can cut and resume: the way to take a shared dependency
 * (RabbitMQ) away from one service under test without stopping it for everybody else.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let port = 0;
  let server: Server | undefined;

  const listen = async () => {
    const next = createServer((client) => {
      const upstream = connect(target.port, target.host);
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        sockets.add(a);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          sockets.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    port = (next.address() as { port: number }).port;
    server = next;
  };

  const cut = async () => {
    const closing = server;
    server = undefined;
    if (!closing) return;
    const closed = new Promise<void>((resolve) => closing.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };

  await listen();
  return {
    host: '127.0.0.1',
    get port() {
      return port;
    },
    cut,
    resume: async () => {
      if (!server) await listen();
    },
    close: cut,
  };
}
