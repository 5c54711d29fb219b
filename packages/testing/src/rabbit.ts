import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './wait';

const run = promisify(execFile);

/** Debian's scripts run as the calling user; /usr/sbin's wrappers would switch to the rabbitmq user. */
const SBIN = ['/usr/lib/rabbitmq/bin', '/usr/local/lib/rabbitmq/bin'].find((dir) => existsSync(dir));
const tool = (name: string) => (SBIN ? path.join(SBIN, name) : name);

export interface PrivateRabbitOptions {
  /** How many nodes; with several, they form one cluster (default 1). */
  nodes?: number;
  /** How long a node may take to boot (default 60 s; a busy 2-core machine needs a few seconds). */
  bootTimeoutMs?: number;
}

export interface PrivateRabbit {
  /** One AMQP URL per node (guest/guest, virtual host "/"), in node order. */
  urls: string[];
  /** The Erlang node names (`<name>@localhost`), in node order. */
  nodes: string[];
  /** Stops node i as an operator would (SIGTERM: a clean shutdown); resolves once the process is gone. */
  stop(node: number): Promise<void>;
  /** Starts node i again with its data and ports; resolves once it takes AMQP connections. */
  start(node: number): Promise<void>;
  /** stop, then start. */
  restart(node: number): Promise<void>;
  /** True while node i's process runs. */
  running(node: number): boolean;
  /** rabbitmqctl (or another CLI tool, e.g. `rabbitmq-queues`) against node i; its stdout. */
  ctl(node: number, args: string[], cli?: string): Promise<string>;
  /** The index of the node that leads a quorum queue now (asked of a running node). */
  leaderOf(queue: string, vhost?: string): Promise<number>;
  /** The nodes holding a replica of a quorum queue, as indexes. */
  membersOf(queue: string, vhost?: string): Promise<number[]>;
  /** The AMQP connections of the cluster now: their `connection_name` and the node each is on. */
  connections(): Promise<{ name: string; node: number }[]>;
  /** Stops every node and removes their data. */
  close(): Promise<void>;
}

interface Node {
  name: string;
  amqpPort: number;
  distPort: number;
  dir: string;
  child?: ChildProcess;
  exited?: Promise<void>;
  output: string;
}

const alive = new Set<ChildProcess>();
// A test process that dies leaves no broker behind: each node runs in a process group of its own.
process.once('exit', () => {
  for (const child of alive) killGroup(child, 'SIGKILL');
});

/**
 * A RabbitMQ of the test's own, from the installed `rabbitmq-server` (Debian's 3.10 here): one node,
 * or several joined into a cluster, for fault tests that stop and restart a broker, which the
 * machine's shared broker (127.0.0.1:5672) must never be. Everything lives in a temporary folder:
 * each node's Mnesia and log directories, an Erlang cookie of the cluster's own (HOME points there,
 * for the server and the CLI tools alike), an empty plugins file (no management or prometheus
 * listener to clash with another node's), and a config that ignores /etc/rabbitmq (its env file
 * names the shared node). Node names are `hub-<random>-<i>@localhost`, AMQP and distribution ports
 * free ones on 127.0.0.1. A cluster forms at first boot through classic peer discovery (node 1
 * starts first, the others find it), which needs no `stop_app`/`join_cluster` round trip.
 * Quorum queues declared on it get a replica on every node (the default group size covers three).
 */
export async function startPrivateRabbit(options: PrivateRabbitOptions = {}): Promise<PrivateRabbit> {
  const count = Math.max(1, options.nodes ?? 1);
  const bootTimeoutMs = options.bootTimeoutMs ?? 60_000;
  const home = await mkdtemp(path.join(tmpdir(), 'hub-rabbit-'));
  const prefix = `hub-${randomBytes(3).toString('hex')}`;
  await writeFile(path.join(home, '.erlang.cookie'), randomBytes(20).toString('hex'));
  await chmod(path.join(home, '.erlang.cookie'), 0o400);
  await writeFile(path.join(home, 'enabled_plugins'), '[].\n');
  await writeFile(path.join(home, 'rabbitmq-env.conf'), '');

  const nodes: Node[] = [];
  const taken = new Set<number>();
  for (let i = 0; i < count; i += 1) {
    const dir = path.join(home, `node-${i + 1}`);
    await mkdir(dir);
    nodes.push({
      name: `${prefix}-${i + 1}@localhost`,
      amqpPort: await freePort(taken),
      distPort: await freePort(taken),
      dir,
      output: '',
    });
  }
  const first = nodes[0]!.name;
  for (const node of nodes) {
    const conf = ['loopback_users = none', 'log.console = false', 'log.file.level = warning'];
    if (node.name !== first)
      conf.push(
        'cluster_formation.peer_discovery_backend = classic_config',
        `cluster_formation.classic_config.nodes.1 = ${first}`,
      );
    await writeFile(path.join(node.dir, 'rabbitmq.conf'), `${conf.join('\n')}\n`);
  }

  const envOf = (node: Node): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HOME: home,
    RABBITMQ_CONF_ENV_FILE: path.join(home, 'rabbitmq-env.conf'),
    RABBITMQ_CONFIG_FILE: path.join(node.dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(home, 'enabled_plugins'),
    RABBITMQ_NODENAME: node.name,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(node.amqpPort),
    RABBITMQ_DIST_PORT: String(node.distPort),
    RABBITMQ_MNESIA_BASE: path.join(node.dir, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(node.dir, 'log'),
    RABBITMQ_PID_FILE: path.join(node.dir, 'rabbitmq.pid'),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    ERL_FLAGS: '-kernel inet_dist_use_interface {127,0,0,1}',
  });

  const ctl = async (i: number, args: string[], cli = 'rabbitmqctl') => {
    const { stdout } = await run(tool(cli), ['-n', nodes[i]!.name, '-q', ...args], {
      env: { PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: home },
      timeout: 60_000,
    });
    return stdout;
  };

  const start = async (i: number) => {
    const node = nodes[i]!;
    if (node.child) throw new Error(`${node.name} runs already`);
    node.output = '';
    const child = spawn(tool('rabbitmq-server'), [], {
      env: envOf(node),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      node.output = (node.output + chunk.toString('utf8')).slice(-16 * 1024);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    alive.add(child);
    node.child = child;
    node.exited = new Promise((resolve) =>
      child.once('close', () => {
        alive.delete(child);
        if (node.child === child) node.child = undefined;
        resolve();
      }),
    );
    try {
      await waitFor(
        async () => {
          if (!node.child) throw new Error('exited');
          return acceptsConnections(node.amqpPort);
        },
        { timeoutMs: bootTimeoutMs, intervalMs: 200, what: `${node.name} taking connections on ${node.amqpPort}` },
      );
    } catch (error) {
      await stop(i);
      throw new Error(`${(error as Error).message}\n--- last output of ${node.name} ---\n${node.output}`);
    }
  };

  const stop = async (i: number) => {
    const node = nodes[i]!;
    if (!node.child) return;
    const child = node.child;
    child.kill('SIGTERM');
    const forced = setTimeout(() => killGroup(child, 'SIGKILL'), 60_000);
    await node.exited;
    clearTimeout(forced);
    // The script waits for the VM; a VM that outlived it (killed script) goes with the group.
    killGroup(child, 'SIGKILL');
  };

  const quorumInfo = async (queue: string, vhost: string) => {
    const up = nodes.findIndex((n) => n.child);
    if (up === -1) throw new Error('no node of the private RabbitMQ runs');
    const rows = JSON.parse(
      await ctl(up, ['list_queues', '-p', vhost, 'name', 'leader', 'members', '--formatter', 'json']),
    ) as { name: string; leader: string; members: string[] }[];
    const row = rows.find((r) => r.name === queue);
    if (!row) throw new Error(`no queue ${queue} in ${vhost}`);
    return row;
  };
  const indexOf = (name: string) => nodes.findIndex((n) => n.name === name);
  const connections = async () => {
    const up = nodes.findIndex((n) => n.child);
    if (up === -1) throw new Error('no node of the private RabbitMQ runs');
    const rows = JSON.parse(
      await ctl(up, ['list_connections', 'port', 'client_properties', '--formatter', 'json']),
    ) as { port: number; client_properties: [string, string, unknown][] }[];
    return rows.map((row) => ({
      name: String(row.client_properties.find(([key]) => key === 'connection_name')?.[2] ?? ''),
      node: nodes.findIndex((n) => n.amqpPort === row.port),
    }));
  };

  const rabbit: PrivateRabbit = {
    urls: nodes.map((n) => `amqp://guest:guest@127.0.0.1:${n.amqpPort}`),
    nodes: nodes.map((n) => n.name),
    start,
    stop,
    restart: async (i) => {
      await stop(i);
      await start(i);
    },
    running: (i) => nodes[i]?.child !== undefined,
    ctl,
    leaderOf: async (queue, vhost = '/') => indexOf((await quorumInfo(queue, vhost)).leader),
    membersOf: async (queue, vhost = '/') => (await quorumInfo(queue, vhost)).members.map(indexOf),
    connections,
    close: async () => {
      await Promise.all(nodes.map((_, i) => stop(i)));
      await rm(home, { recursive: true, force: true });
    },
  };

  try {
    // The first node alone, then the others, which join it as they boot.
    await start(0);
    await Promise.all(nodes.slice(1).map((_, i) => start(i + 1)));
    if (count > 1) {
      await waitFor(
        async () => {
          const status = JSON.parse(await ctl(0, ['cluster_status', '--formatter', 'json'])) as {
            running_nodes: string[];
          };
          return status.running_nodes.length === count;
        },
        { timeoutMs: bootTimeoutMs, intervalMs: 500, what: `a cluster of ${count} nodes` },
      );
    }
  } catch (error) {
    await rabbit.close();
    throw error;
  }
  return rabbit;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** True when something answers on the port; RabbitMQ opens its AMQP listener last in its boot. */
function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A port free now, outside RabbitMQ's own ranges: Erlang distribution at 25672 (AMQP + 20000) and
 * the CLI tools' 35672–35682 (distribution + 10000), nor where our distribution port + 10000 (the
 * CLI range of our nodes) would pass 65535.
 */
async function freePort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 40_000 + Math.floor(Math.random() * 15_000);
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
}
