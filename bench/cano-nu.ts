/**
 * The least a proxy can do, for bench/gateway.ts: node:http in, `http.request` on a keep-alive agent
 * out, both bodies piped, the status and headers copied; no routing, ids, limits or metrics. The
 * yardstick of the gateway's CPU per proxied request. Its own process; the target URL is its first
 * argument; prints its port on stdout.
 */
import { Agent, createServer, request } from 'node:http';

const target = new URL(process.argv[2] ?? 'http://127.0.0.1:8083');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

const server = createServer((req, res) => {
  const out = request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  out.on('error', () => res.destroy());
  req.pipe(out);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
