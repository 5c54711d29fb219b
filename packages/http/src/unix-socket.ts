import { createHash } from 'node:crypto';
import { lstat, stat, unlink } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { dirname } from 'node:path';

/** How long a socket file's server has to accept a connection; no answer by then is no proof it is gone. */
const PROBE_MS = 1_000;

/**
 * What a connection to the Unix socket at `path` says of it: `left` only when it is refused
 * (ECONNREFUSED: the file is there and no one listens on it). Anything else is no proof that no
 * one does: a live server whose backlog is full refuses with EAGAIN, one of another user with
 * EACCES, a stalled one lets the probe time out.
 */
function probe(path: string): Promise<{ left: true } | { left: false; why: string }> {
  return new Promise((resolve) => {
    const connection = connect(path);
    const done = (result: { left: true } | { left: false; why: string }) => {
      clearTimeout(timer);
      connection.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({ left: false, why: `no answer in ${PROBE_MS} ms` }), PROBE_MS);
    connection.once('connect', () => done({ left: false, why: 'a server accepts connections on it' }));
    connection.once('error', (error: NodeJS.ErrnoException) =>
      // ENOENT: the file went meanwhile (its server closed), and there is nothing to remove.
      done(
        error.code === 'ECONNREFUSED' || error.code === 'ENOENT'
          ? { left: true }
          : { left: false, why: `connecting to it gives ${error.code}` },
      ),
    );
  });
}

/**
 * Makes `path` free to listen on. Node removes a socket's file when its server closes, but a process
 * killed (kill -9, a crash, the machine) leaves it, and listen() then fails with EADDRINUSE for ever:
 * such a file, which refuses connections (ECONNREFUSED), is removed. A socket another process still
 * serves (a second instance started by mistake) is an error, as a port in use is, and so is one
 * that cannot be told apart from it (busy: EAGAIN; another user's: EACCES; no answer); so is a path
 * that is not a socket (a file this process must not erase).
 */
export async function freeSocketPath(path: string): Promise<void> {
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (stats === undefined) {
    // libuv reports a missing directory as EACCES at listen ("permission denied"), which sends the
    // operator after permissions: the cause is named here instead.
    const directory = dirname(path);
    const dir = await stat(directory).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (dir === undefined) throw new Error(`the directory ${directory} of the Unix socket ${path} does not exist`);
    return;
  }
  if (!stats.isSocket()) throw new Error(`${path} exists and is not a Unix socket; it is left as it is`);
  const probed = await probe(path);
  if (!probed.left)
    throw new Error(`another process may serve the Unix socket ${path} (${probed.why}); it is left as it is`);
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/**
 * Holds `path` for one process while it frees and binds it, and returns how to let it go. Without
 * it, two processes starting at once on a socket left behind both found it refused, both removed
 * it, and the second's removal could take the file the first had just bound: both then served,
 * the first on a file no one could reach any more (and its close would remove the second's). The
 * hold is an abstract Unix socket (Linux: no file, gone with its process, even on SIGKILL) named
 * after the path; a second process meanwhile is refused, as it would be a moment later by the first
 * one's answer. Abstract sockets belong to a network namespace: containers that share the socket's
 * directory but not the network are not held apart. Elsewhere (macOS) nothing is held.
 */
export async function holdSocketPath(path: string): Promise<() => void> {
  if (process.platform !== 'linux') return () => undefined;
  const name = `\0hub-unix-socket:${createHash('sha256').update(path).digest('hex').slice(0, 40)}`;
  const hold = createServer();
  const held = await new Promise<boolean>((resolve, reject) => {
    hold.once('listening', () => resolve(true));
    hold.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        reject(new Error(`another process is starting to serve the Unix socket ${path}; it is left as it is`));
      // A sandbox without abstract sockets: the start goes on unheld, as before there was a hold.
      else resolve(false);
    });
    hold.listen(name);
  });
  if (!held) return () => undefined;
  hold.unref();
  return () => hold.close();
}
