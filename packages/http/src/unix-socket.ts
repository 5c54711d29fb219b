import { lstat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';

/** How long a socket file's server has to accept a connection before the file counts as left behind. */
const PROBE_MS = 1_000;

/** Whether a server accepts connections on the Unix socket at `path`. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    const done = (alive: boolean) => {
      clearTimeout(timer);
      probe.destroy();
      resolve(alive);
    };
    const timer = setTimeout(() => done(false), PROBE_MS);
    probe.once('connect', () => done(true));
    // ECONNREFUSED: the file is there and no one listens on it.
    probe.once('error', () => done(false));
  });
}

/**
 * Makes `path` free to listen on. Node removes a socket's file when its server closes, but a process
 * killed (kill -9, a crash, the machine) leaves it, and listen() then fails with EADDRINUSE for ever:
 * such a file, which no server answers on, is removed. A socket another process still serves (a
 * second instance started by mistake) is an error, as a port in use is; so is a path that is not a
 * socket (a file this process must not erase).
 */
export async function freeSocketPath(path: string): Promise<void> {
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (stats === undefined) return;
  if (!stats.isSocket()) throw new Error(`${path} exists and is not a Unix socket; it is left as it is`);
  if (await answers(path)) throw new Error(`another process serves the Unix socket ${path}`);
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}
