import { Agent, get, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import express from 'express';
import { listen } from './app';

/** A keep-alive GET whose socket the test can watch; resolves with the response once it has arrived. */
function keepAliveGet(agent: Agent, url: string) {
  let socket!: Socket;
  const response = new Promise<{ res: IncomingMessage; body: string }>((resolve, reject) => {
    const req = get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ res, body }));
    });
    req.on('socket', (s) => {
      socket = s;
    });
    req.on('error', reject);
  });
  const socketClosed = response.then(() =>
    socket.destroyed ? undefined : new Promise<void>((resolve) => socket.once('close', () => resolve())),
  );
  return { response, socketClosed };
}

describe('listen', () => {
  it('When answers are still under way as the server closes, then close() resolves once they are sent and their connections are closed', async () => {
    const gates: (() => void)[] = [];
    const app = express();
    app.get('/lento', (_req, res) => {
      gates.push(() => res.json({ ok: true }));
    });
    app.get('/aos-poucos', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      gates.push(() => res.end('b'));
    });
    const server = await listen(app, 0);
    const agent = new Agent({ keepAlive: true });
    try {
      const lento = keepAliveGet(agent, `${server.url}/lento`);
      const aosPoucos = keepAliveGet(agent, `${server.url}/aos-poucos`);
      while (gates.length < 2) await new Promise((resolve) => setImmediate(resolve));
      const closed = server.close();
      for (const open of gates) open();
      expect((await lento.response).body).toBe('{"ok":true}');
      expect((await lento.response).res.headers.connection).toBe('close');
      expect((await aosPoucos.response).body).toBe('ab');
      // Before, both waited for the server's 65 s keep-alive timeout, and so did close().
      await Promise.all([closed, lento.socketClosed, aosPoucos.socketClosed]);
    } finally {
      agent.destroy();
    }
  }, 10_000);
});
