// What `pnpm start` needs before it starts anything, and how to tell when a service is ready.
import net from 'node:net';

/** Resolves true when something accepts TCP connections on host:port within `timeoutMs`. */
export function canConnect(host, port, timeoutMs = 1500) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Resolves true when nothing listens on the port yet (so the service can bind it). */
export function isPortFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

function hostAndPort(url, fallbackPort) {
  const parsed = new URL(url);
  return { host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', port: Number(parsed.port || fallbackPort) };
}

/** PostgreSQL and RabbitMQ: a list of what is missing, each with how to start it. */
export async function missingInfrastructure(env) {
  const missing = [];
  const pg = hostAndPort(env.DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres', 5432);
  if (!(await canConnect(pg.host, pg.port))) {
    missing.push(
      `PostgreSQL is not reachable at ${pg.host}:${pg.port} (DATABASE_ADMIN_URL).\n` +
        '    Start it:  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n' +
        '    or:        docker compose up -d postgres',
    );
  }
  // A cluster's nodes are separated by commas: one that answers is enough to start.
  const nodes = (env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672')
    .split(',')
    .map((u) => hostAndPort(u.trim(), 5672));
  const reachable = await Promise.all(nodes.map((node) => canConnect(node.host, node.port)));
  const amqp = nodes[0];
  if (!reachable.some(Boolean)) {
    missing.push(
      `RabbitMQ is not reachable at ${amqp.host}:${amqp.port} (RABBITMQ_URL).\n` +
        '    Start it:  rabbitmq-server -detached   (then wait a few seconds)\n' +
        '    or:        docker compose up -d rabbitmq',
    );
  }
  return missing;
}

/** Polls GET /saude/prontidao until 200; rejects with the last answer when `timeoutMs` passes or `gaveUp()` says so. */
export async function waitUntilReady(url, { timeoutMs, gaveUp }) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (gaveUp()) throw new Error('the process exited');
    try {
      const response = await fetch(`${url}/saude/prontidao`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
      last = `${response.status} ${(await response.text()).slice(0, 300)}`;
    } catch (error) {
      last = error.cause?.code ?? error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`not ready within ${Math.round(timeoutMs / 1000)} s (last answer: ${last})`);
}
