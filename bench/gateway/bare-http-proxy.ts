/**
 * The least a proxy can do, for bench/gateway/proxy-cost.ts: node:http in, `http.request` on a keep-alive agent
 * out, both bodies piped, the status and headers copied; no routing, ids, limits or metrics. The
 * yardstick of the gateway's CPU per proxied request. Its own process; the target URL is its first
 * argument (http://host:port, or unix:/path.sock for the service's Unix socket, the way the gateway
 * reaches it on one host); prints its port on stdout.
 */
import { Agent, createServer, request } from 'node:http';

const alvo = process.argv[2] ?? 'http://127.0.0.1:8083';
/** `unix:/path.sock`: the service's Unix socket, as the gateway reaches it when both run on one host. */
const onde = alvo.startsWith('unix:')
  ? { socketPath: alvo.slice('unix:'.length) }
  : { host: new URL(alvo).hostname, port: new URL(alvo).port };
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

const server = createServer((req, res) => {
  const out = request({ ...onde, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => res.destroy());
  req.pipe(out);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
