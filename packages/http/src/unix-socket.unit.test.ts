import { spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type RunningServer, listen } from './app';

/** A GET over a Unix socket: its status and body. */
function getOnSocket(socketPath: string, pathname: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: pathname, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every request answered with its path. */
const app = (req: IncomingMessage, res: ServerResponse) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ caminho: req.url }));
};

describe('listen on a Unix socket as well as a port', () => {
  let dir: string;
  let running: RunningServer | undefined;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'hub-sock-'));
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('When a socket is given, then the same app answers on it and on the port, and closing removes its file', async () => {
    const socket = path.join(dir, 'svc.sock');
    running = await listen(app, 0, '127.0.0.1', { socket });
    expect(running.socket).toBe(socket);
    expect(await getOnSocket(socket, '/pelo-socket')).toEqual({ status: 200, body: '{"caminho":"/pelo-socket"}' });
    expect((await fetch(`${running.url}/pela-porta`)).status).toBe(200);
    await running.close();
    running = undefined;
    expect(() => lstatSync(socket)).toThrow(/ENOENT/);
  });

  it('When a socket file was left by a process that died, then it is replaced and served', async () => {
    const socket = path.join(dir, 'svc.sock');
    // A process serving the socket, killed with SIGKILL: its file stays and no one listens on it.
    const morto = spawn(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(socket)}, () => console.log('ouvindo'))`,
    ]);
    await new Promise((resolve) => morto.stdout.once('data', resolve));
    const saiu = new Promise((resolve) => morto.once('exit', resolve));
    morto.kill('SIGKILL');
    await saiu;
    expect(lstatSync(socket).isSocket()).toBe(true);
    running = await listen(app, 0, '127.0.0.1', { socket });
    expect((await getOnSocket(socket, '/de-novo')).status).toBe(200);
  });

  it('When two processes start at once on a socket file left behind, then one serves it and the other is refused (never both, one on a file gone)', async () => {
    const socket = path.join(dir, 'svc.sock');
    // In one process, as two would race: each time, both found the file refused, both removed it,
    // and now and then the second removal took the file the first had just bound.
    for (let vez = 0; vez < 20; vez += 1) {
      const morto = spawn(process.execPath, [
        '-e',
        `require('node:net').createServer().listen(${JSON.stringify(socket)}, () => console.log('ouvindo'))`,
      ]);
      await new Promise((resolve) => morto.stdout.once('data', resolve));
      const saiu = new Promise((resolve) => morto.once('exit', resolve));
      morto.kill('SIGKILL');
      await saiu;
      const [um, outro] = await Promise.allSettled([
        listen(app, 0, '127.0.0.1', { socket }),
        listen(app, 0, '127.0.0.1', { socket }),
      ]);
      const servidos = [um, outro].flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const recusas = [um, outro].flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
      try {
        expect({ vez, servidos: servidos.length }).toEqual({ vez, servidos: 1 });
        expect(recusas[0]).toMatch(/another process (is starting to serve|may serve) the Unix socket|EADDRINUSE/);
        expect((await getOnSocket(socket, '/quem')).status).toBe(200);
      } finally {
        for (const servido of servidos) await servido.close();
      }
    }
  });

  it('When another server still answers on the socket, then listen fails and the other keeps serving', async () => {
    const socket = path.join(dir, 'svc.sock');
    const primeiro = await listen(app, 0, '127.0.0.1', { socket });
    try {
      await expect(listen(app, 0, '127.0.0.1', { socket })).rejects.toThrow(
        `another process may serve the Unix socket ${socket} (a server accepts connections on it)`,
      );
      expect((await getOnSocket(socket, '/ainda')).status).toBe(200);
    } finally {
      await primeiro.close();
    }
  });

  it('When the path is a file that is not a socket, then listen fails and leaves the file as it was', async () => {
    const socket = path.join(dir, 'dados.txt');
    writeFileSync(socket, 'não apague');
    await expect(listen(app, 0, '127.0.0.1', { socket })).rejects.toThrow(
      `${socket} exists and is not a Unix socket; it is left as it is`,
    );
    expect(readFileSync(socket, 'utf8')).toBe('não apague');
  });

  it('When the server on the socket is alive but cannot take a connection now (its backlog full, EAGAIN), then listen fails and leaves its file', async () => {
    const socket = path.join(dir, 'svc.sock');
    // A live server whose event loop is blocked with a backlog of 1: further connects get EAGAIN.
    const ocupado = spawn(process.execPath, [
      '-e',
      `require('node:net').createServer().listen({ path: ${JSON.stringify(socket)}, backlog: 1 }, () => {
        console.log('ouvindo');
        setTimeout(() => { const fim = Date.now() + 3000; while (Date.now() < fim); }, 20);
      })`,
    ]);
    try {
      await new Promise((resolve) => ocupado.stdout.once('data', resolve));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const enchendo: Socket[] = [];
      let recusada = false;
      while (!recusada && enchendo.length < 16) {
        const conexao = connect(socket);
        enchendo.push(conexao);
        recusada = await new Promise<boolean>((resolve) => {
          conexao.once('connect', () => resolve(false));
          conexao.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EAGAIN'));
        });
      }
      expect(recusada).toBe(true);
      await expect(listen(app, 0, '127.0.0.1', { socket })).rejects.toThrow(
        `another process may serve the Unix socket ${socket} (connecting to it gives EAGAIN)`,
      );
      expect(lstatSync(socket).isSocket()).toBe(true);
      for (const conexao of enchendo) conexao.destroy();
    } finally {
      ocupado.kill('SIGKILL');
    }
  });

  it('When listening on the socket fails (its directory missing), then the error says so and the port is let go too', async () => {
    const primeiro = await listen(app, 0, '127.0.0.1');
    const port = primeiro.port;
    await primeiro.close();
    // libuv reports a missing directory as EACCES ("permission denied"): the error names the cause instead.
    await expect(listen(app, port, '127.0.0.1', { socket: path.join(dir, 'nao-existe', 'svc.sock') })).rejects.toThrow(
      `the directory ${path.join(dir, 'nao-existe')} of the Unix socket ${path.join(dir, 'nao-existe', 'svc.sock')} does not exist`,
    );
    running = await listen(app, port, '127.0.0.1');
    expect(running.port).toBe(port);
  });
});
