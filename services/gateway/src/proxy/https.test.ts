import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { type SpawnedService, spawnService } from '@hub/testing';
import request from 'supertest';
import { LOCALHOST_CERT, LOCALHOST_KEY } from '../testing/tls.test-support';

/**
 * A service behind the gateway at an https URL. The gateway runs as its own process (main.ts), so
 * that it can trust the test's self-signed certificate (NODE_EXTRA_CA_CERTS is read at start) and
 * check it as it would any other: the name it asks for and checks is the service's own.
 */
describe('gateway in front of a service over https', () => {
  const reached: {
    servername: string | false | null | undefined;
    host: string | undefined;
    forwardedHost: string | string[] | undefined;
    port: number | undefined;
  }[] = [];
  let server: Server;
  let gateway: SpawnedService | undefined;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gateway-https-'));
    await writeFile(path.join(dir, 'ca.pem'), LOCALHOST_CERT);
    server = createServer({ key: LOCALHOST_KEY, cert: LOCALHOST_CERT }, (req, res) => {
      const socket = req.socket as TLSSocket;
      reached.push({
        servername: socket.servername,
        host: req.headers.host,
        forwardedHost: req.headers['x-forwarded-host'],
        port: socket.remotePort,
      });
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ servico: 'function', method: req.method, url: req.url }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await gateway?.kill();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it("When a service is at an https URL, then requests reach it, asking for and checking the service's name (its Host too), the client's Host as X-Forwarded-Host, on one kept-alive connection", async () => {
    const { port } = server.address() as { port: number };
    gateway = spawnService(path.join(__dirname, '..', 'main.ts'), {
      GATEWAY_PORT: '0',
      GATEWAY_METRICS_PORT: '0',
      GATEWAY_UPSTREAMS: 'function',
      FUNCTION_URL: `https://localhost:${port}`,
      NODE_EXTRA_CA_CERTS: path.join(dir, 'ca.pem'),
    });
    const url = await gateway.url('gateway');
    const first = await request(url).get('/funcao/a?b=1').set('host', 'hub.example').expect(200);
    expect(first.body).toEqual({ servico: 'function', method: 'GET', url: '/funcao/a?b=1' });
    const second = await request(url).post('/funcao/c').set('host', 'outro.example').send({ d: 1 }).expect(200);
    expect(second.body).toEqual({ servico: 'function', method: 'POST', url: '/funcao/c' });
    expect(reached.map((r) => r.servername)).toEqual(['localhost', 'localhost']);
    expect(reached.map((r) => r.host)).toEqual([`localhost:${port}`, `localhost:${port}`]);
    expect(reached.map((r) => r.forwardedHost)).toEqual(['hub.example', 'outro.example']);
    expect(reached[1]!.port).toBe(reached[0]!.port);
    expect(await gateway.stop()).toBe(0);
  });
});
